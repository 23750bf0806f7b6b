package dev.herald.dispatcher.mqtt;

import static dev.herald.dispatcher.Futures.await;

import dev.herald.contract.MqttRevocation;
import dev.herald.contract.Queues;
import dev.herald.contract.amqp.ConfirmedPublisher;
import dev.herald.contract.amqp.PublishFailedException;
import dev.herald.dispatcher.Ids;
import dev.herald.dispatcher.audit.AdminAudit;
import dev.herald.dispatcher.auth.AdminApi;
import dev.herald.dispatcher.auth.AdminCaller;
import dev.herald.dispatcher.problem.Problems;
import dev.herald.store.app.AppStore;
import dev.herald.store.mqtt.CredentialGenerations;
import dev.herald.store.mqtt.DeviceSessions;
import dev.herald.store.mqtt.MqttAddresses;
import java.util.Map;
import java.util.concurrent.CompletionException;
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
    private final CredentialGenerations generations;
    private final ConfirmedPublisher publisher;
    private final AdminAudit audit;

    public MqttRevocationController(AppStore apps, CredentialGenerations generations, ConfirmedPublisher publisher,
                                    AdminAudit audit) {
        this.audit = audit;
        this.apps = apps;
        this.generations = generations;
        this.publisher = publisher;
    }

    @DeleteMapping("/v1/apps/{appId}/devices/{deviceId}/mqtt-credentials")
    ResponseEntity<Void> revoke(AdminCaller caller, @PathVariable String appId, @PathVariable String deviceId) {
        Ids.appId(appId);
        Ids.deviceId(deviceId);
        if (await(apps.load(appId)).isEmpty()) {
            throw Problems.notFound("app " + appId + " does not exist");
        }
        CredentialGenerations.Revoked revoked = await(generations.revoke(appId, deviceId));
        // Recorded before the disconnect, which may fail (503) after the revocation took effect.
        audit.record(caller, "device.mqtt-credentials.revoked", appId, deviceId, "generation " + revoked.generation());
        revoked.connected().ifPresent(holder -> disconnect(appId, deviceId, holder));
        log.info("app {}: MQTT credentials of device {} revoked (generation {})", appId, deviceId, revoked.generation());
        return ResponseEntity.noContent().build();
    }

    /**
     * Tells the node holding the device to close that connection. A node that is gone has no queue
     * (unroutable): its connections are gone too. Any other failure is a 503: the password is
     * revoked, but the connection may still be open; revoking again closes it.
     */
    private void disconnect(String appId, String deviceId, DeviceSessions.Holder holder) {
        try {
            await(publisher.publish(new ConfirmedPublisher.Outgoing(Queues.EXCHANGE, MqttAddresses.nodeQueue(holder.nodeId()),
                    "revoked-" + appId + "/" + deviceId + "/" + holder.connectionId(),
                    new MqttRevocation(appId, deviceId, holder.connectionId()), Map.of(MqttRevocation.HEADER, "1"))));
        } catch (CompletionException e) {
            if (!(e.getCause() instanceof PublishFailedException failed && failed.reason() == PublishFailedException.Reason.unroutable)) {
                throw Problems.unavailable("the credentials are revoked, but the device's connection could not be closed: revoke again", 1);
            }
        }
    }
}
