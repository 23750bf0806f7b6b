package dev.herald.dispatcher.device;

import static dev.herald.dispatcher.Futures.await;

import com.fasterxml.jackson.annotation.JsonInclude;
import dev.herald.contract.Channel;
import dev.herald.dispatcher.Ids;
import dev.herald.dispatcher.auth.AppApi;
import dev.herald.dispatcher.auth.AuthenticatedApp;
import dev.herald.dispatcher.problem.Problems;
import dev.herald.dispatcher.problem.RequestValidator;
import dev.herald.dispatcher.schedule.TimeZones;
import dev.herald.store.device.Device;
import dev.herald.store.device.DeviceRegistry;
import dev.herald.store.mqtt.CredentialGenerations;
import dev.herald.store.mqtt.MqttCredentials;
import dev.herald.store.mqtt.MqttAddresses;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;
import jakarta.validation.constraints.Size;
import java.time.Instant;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/** Devices of an app and their topics. */
@AppApi
@RestController
public class DeviceController {
    static final int MAX_TOPICS = 100;

    /**
     * Body of {@code PUT .../devices/{deviceId}}: replaces the device, including its topics and time
     * zone. The {@code mqtt} channel needs no token: the device connects to Herald itself.
     *
     * @param timeZone the device's IANA time zone (Europe/Paris), for sends at a local time; absent:
     *                 the app's default zone
     */
    public record DeviceRequest(
            @NotNull(message = "is required") Channel channel,
            @Pattern(regexp = Ids.TOKEN, message = "must be 1 to 4096 printable ASCII characters without spaces") String token,
            @Size(max = MAX_TOPICS, message = "must have at most " + MAX_TOPICS + " topics")
            List<@NotNull(message = "must not be null") @Pattern(regexp = Ids.TOPIC, message = "must match " + Ids.TOPIC) String> topics,
            String timeZone) {
    }

    /**
     * A registered device; {@code updatedAt} is its last registration (a re-registration refreshes
     * its token), {@code stale} whether that is older than {@code herald.tokens.stale-after};
     * {@code mqtt} (mqtt channel only) says how it connects to the connection manager, including its password.
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record DeviceResponse(String deviceId, Channel channel, String token, List<String> topics, Instant updatedAt,
                                 boolean stale, MqttAccess mqtt, String timeZone) {
        /** @param mqttPassword the device's current MQTT password (mqtt channel only, else null) */
        static DeviceResponse of(Device device, String mqttPassword) {
            boolean viaMqtt = device.channel() == Channel.mqtt;
            MqttAccess mqtt = viaMqtt
                    ? new MqttAccess(device.deviceId(), device.appId(), mqttPassword,
                            MqttAddresses.deviceTopic(device.appId(), device.deviceId()))
                    : null;
            return new DeviceResponse(device.deviceId(), device.channel(), viaMqtt ? null : device.token(),
                    device.topics().stream().sorted().toList(), device.updatedAt(), device.stale(), mqtt,
                    device.timeZone().orElse(null));
        }
    }

    /** MQTT CONNECT parameters of a device, and the topic it subscribes to (QoS 1). */
    public record MqttAccess(String clientId, String username, String password, String topic) {
    }

    private final DeviceRegistry devices;
    private final RequestValidator validator;
    private final MqttCredentials credentials;
    private final CredentialGenerations generations;

    public DeviceController(DeviceRegistry devices, RequestValidator validator, MqttCredentials credentials,
                            CredentialGenerations generations) {
        this.devices = devices;
        this.validator = validator;
        this.credentials = credentials;
        this.generations = generations;
    }

    @PutMapping("/v1/apps/{appId}/devices/{deviceId}")
    DeviceResponse register(AuthenticatedApp app, @PathVariable String deviceId, @RequestBody DeviceRequest request) {
        Ids.deviceId(deviceId);
        validator.validate(request);
        // An MQTT device's "token" is its own id: the gateway routes by it.
        String token = request.channel() == Channel.mqtt ? deviceId : request.token();
        if (token == null) {
            throw Problems.invalidField("token", "is required for the " + request.channel() + " channel");
        }
        List<String> topics = request.topics() == null ? List.of() : List.copyOf(new LinkedHashSet<>(request.topics()));
        Optional<String> timeZone = Optional.ofNullable(request.timeZone()).map(zone -> TimeZones.parse("timeZone", zone).getId());
        await(devices.register(app.id(), deviceId, request.channel(), token, topics));
        await(devices.setTimeZone(app.id(), deviceId, timeZone));
        return respond(find(app, deviceId));
    }

    @GetMapping("/v1/apps/{appId}/devices/{deviceId}")
    DeviceResponse get(AuthenticatedApp app, @PathVariable String deviceId) {
        Ids.deviceId(deviceId);
        return respond(find(app, deviceId));
    }

    @DeleteMapping("/v1/apps/{appId}/devices/{deviceId}")
    ResponseEntity<Void> delete(AuthenticatedApp app, @PathVariable String deviceId) {
        Ids.deviceId(deviceId);
        if (!await(devices.unregister(app.id(), deviceId))) {
            throw unknown(deviceId);
        }
        return ResponseEntity.noContent().build();
    }

    @PutMapping("/v1/apps/{appId}/devices/{deviceId}/topics/{topic}")
    ResponseEntity<Void> subscribe(AuthenticatedApp app, @PathVariable String deviceId, @PathVariable String topic) {
        Ids.deviceId(deviceId);
        Ids.topic(topic);
        Device device = find(app, deviceId);
        if (!device.topics().contains(topic) && device.topics().size() >= MAX_TOPICS) {
            throw Problems.invalidField("topic", "the device already follows " + MAX_TOPICS + " topics");
        }
        if (!await(devices.subscribe(app.id(), deviceId, topic))) {
            throw unknown(deviceId);
        }
        return ResponseEntity.noContent().build();
    }

    @DeleteMapping("/v1/apps/{appId}/devices/{deviceId}/topics/{topic}")
    ResponseEntity<Void> unsubscribe(AuthenticatedApp app, @PathVariable String deviceId, @PathVariable String topic) {
        Ids.deviceId(deviceId);
        Ids.topic(topic);
        if (!await(devices.unsubscribe(app.id(), deviceId, topic))) {
            throw unknown(deviceId);
        }
        return ResponseEntity.noContent().build();
    }

    /** An MQTT device's password is that of its current credential generation (revocation moves it on). */
    private DeviceResponse respond(Device device) {
        String password = device.channel() == Channel.mqtt
                ? credentials.password(device.appId(), device.deviceId(), await(generations.current(device.appId(), device.deviceId())))
                : null;
        return DeviceResponse.of(device, password);
    }

    private Device find(AuthenticatedApp app, String deviceId) {
        return await(devices.find(app.id(), deviceId)).orElseThrow(() -> unknown(deviceId));
    }

    private static RuntimeException unknown(String deviceId) {
        return Problems.notFound("device " + deviceId + " is not registered");
    }
}
