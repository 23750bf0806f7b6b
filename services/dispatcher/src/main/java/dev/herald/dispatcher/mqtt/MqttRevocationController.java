package dev.herald.dispatcher.mqtt;

import static dev.herald.dispatcher.Futures.await;

import dev.herald.dispatcher.Ids;
import dev.herald.dispatcher.audit.AdminAudit;
import dev.herald.dispatcher.auth.AdminApi;
import dev.herald.dispatcher.auth.AdminCaller;
import dev.herald.dispatcher.problem.Problems;
import dev.herald.store.app.AppStore;
import dev.herald.store.mqtt.CredentialGenerations;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

/**
 * Revokes one device's MQTT password (admin token): its credential generation moves on, so the
 * password it has is refused at every CONNECT (CONNACK not authorized), and a connection it holds
 * now is closed by its node (MQTT 5: DISCONNECT 0x87). The device's next registration or read
 * ({@code PUT}/{@code GET .../devices/{deviceId}}, app key) returns its new password.
 *
 * <p>Any device id of an existing app can be revoked, registered or not: MQTT passwords are derived,
 * so an unregistered device's password would otherwise still connect.
 */
@AdminApi
@RestController
public class MqttRevocationController {
    private static final Logger log = LoggerFactory.getLogger(MqttRevocationController.class);

    private final AppStore apps;
    private final MqttCredentialRevoker revoker;
    private final AdminAudit audit;

    public MqttRevocationController(AppStore apps, MqttCredentialRevoker revoker, AdminAudit audit) {
        this.apps = apps;
        this.revoker = revoker;
        this.audit = audit;
    }

    @DeleteMapping("/v1/apps/{appId}/devices/{deviceId}/mqtt-credentials")
    ResponseEntity<Void> revoke(AdminCaller caller, @PathVariable String appId, @PathVariable String deviceId) {
        Ids.appId(appId);
        Ids.deviceId(deviceId);
        if (await(apps.load(appId)).isEmpty()) {
            throw Problems.notFound("app " + appId + " does not exist");
        }
        CredentialGenerations.Revoked revoked = revoker.revoke(appId, deviceId);
        // Recorded before the disconnect, which may fail (503) after the revocation took effect.
        audit.record(caller, "device.mqtt-credentials.revoked", appId, deviceId, "generation " + revoked.generation());
        revoker.disconnect(appId, deviceId, revoked);
        log.info("app {}: MQTT credentials of device {} revoked (generation {})", appId, deviceId, revoked.generation());
        return ResponseEntity.noContent().build();
    }
}
