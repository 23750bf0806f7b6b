package dev.herald.dispatcher.device;

import static dev.herald.dispatcher.Futures.await;

import com.fasterxml.jackson.annotation.JsonInclude;
import dev.herald.contract.Channel;
import dev.herald.dispatcher.Ids;
import dev.herald.dispatcher.auth.AppApi;
import dev.herald.dispatcher.auth.AuthenticatedApp;
import dev.herald.dispatcher.mqtt.MqttCredentialRevoker;
import dev.herald.dispatcher.problem.Problems;
import dev.herald.dispatcher.problem.RequestValidator;
import dev.herald.dispatcher.schedule.TimeZones;
import dev.herald.store.device.Device;
import dev.herald.store.device.DeviceRegistry;
import dev.herald.store.device.Registration;
import dev.herald.store.mqtt.CredentialGenerations;
import dev.herald.store.mqtt.DeviceSessions;
import dev.herald.store.mqtt.MqttCredentials;
import dev.herald.store.mqtt.MqttAddresses;
import dev.herald.store.webpush.WebPushSubscription;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;
import jakarta.validation.constraints.Size;
import java.time.Instant;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
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
     * zone. The {@code mqtt} channel needs no token: the device connects to Herald itself. The
     * {@code webpush} channel gives the browser's {@code subscription} instead of a token.
     *
     * @param timeZone the device's IANA time zone (Europe/Paris), for sends at a local time; absent:
     *                 the app's default zone
     */
    public record DeviceRequest(
            @NotNull(message = "is required") Channel channel,
            @Pattern(regexp = Ids.TOKEN, message = "must be 1 to 4096 printable ASCII characters without spaces") String token,
            @Size(max = MAX_TOPICS, message = "must have at most " + MAX_TOPICS + " topics")
            List<@NotNull(message = "must not be null") @Pattern(regexp = Ids.TOPIC, message = "must match " + Ids.TOPIC) String> topics,
            String timeZone,
            WebPushSubscriptionJson subscription) {
    }

    /**
     * A browser's {@code PushSubscription.toJSON()} as it is: {@code expirationTime} is accepted and
     * not used (browsers send null; a subscription that expires ends in 404/410, which removes it).
     */
    public record WebPushSubscriptionJson(String endpoint, Long expirationTime, WebPushKeys keys) {
    }

    /** The subscription's keys: {@code p256dh} (P-256 public key) and {@code auth} (16 bytes), base64url. */
    public record WebPushKeys(String p256dh, String auth) {
    }

    /**
     * A registered device; {@code updatedAt} is its last registration (a re-registration refreshes
     * its token), {@code stale} whether that is older than {@code herald.tokens.stale-after};
     * {@code mqtt} (mqtt channel only) says how it connects to the connection manager, including its password.
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record DeviceResponse(String deviceId, Channel channel, String token, List<String> topics, Instant updatedAt,
                                 boolean stale, MqttAccess mqtt, String timeZone, WebPushSubscriptionJson subscription) {
        /**
         * @param mqttPassword the device's current MQTT password (mqtt channel only, else null)
         * @param presence     its last CONNECT and whether it is connected now (mqtt channel only, else null)
         */
        public static DeviceResponse of(Device device, String mqttPassword, DeviceSessions.Presence presence) {
            WebPushSubscriptionJson subscription = null;
            if (device.channel() == Channel.webpush) {
                WebPushSubscription stored = WebPushSubscription.fromToken(device.token());
                subscription = new WebPushSubscriptionJson(stored.endpoint().toString(), null,
                        new WebPushKeys(stored.p256dh(), stored.auth()));
            }
            boolean viaMqtt = device.channel() == Channel.mqtt;
            MqttAccess mqtt = viaMqtt
                    ? new MqttAccess(device.deviceId(), device.appId(), mqttPassword,
                            MqttAddresses.deviceTopic(device.appId(), device.deviceId()),
                            presence.lastConnect().orElse(null), presence.connected())
                    : null;
            return new DeviceResponse(device.deviceId(), device.channel(), viaMqtt || subscription != null ? null : device.token(),
                    device.topics().stream().sorted().toList(), device.updatedAt(), device.stale(), mqtt,
                    device.timeZone().orElse(null), subscription);
        }
    }

    /**
     * MQTT CONNECT parameters of a device, and the topic it subscribes to (QoS 1); when a connection
     * manager last accepted its CONNECT (absent: never), and whether it holds a session on a live node now.
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record MqttAccess(String clientId, String username, String password, String topic, Instant lastConnectAt,
                             boolean connected) {
    }

    private final DeviceRegistry devices;
    private final RequestValidator validator;
    private final MqttCredentials credentials;
    private final WebPushEndpoints endpoints;
    private final CredentialGenerations generations;
    private final DeviceSessions sessions;
    private final MqttCredentialRevoker revoker;

    public DeviceController(DeviceRegistry devices, RequestValidator validator, MqttCredentials credentials,
                            WebPushEndpoints endpoints, CredentialGenerations generations, DeviceSessions sessions,
                            MqttCredentialRevoker revoker) {
        this.devices = devices;
        this.revoker = revoker;
        this.validator = validator;
        this.credentials = credentials;
        this.endpoints = endpoints;
        this.generations = generations;
        this.sessions = sessions;
    }

    @PutMapping("/v1/apps/{appId}/devices/{deviceId}")
    DeviceResponse register(AuthenticatedApp app, @PathVariable String deviceId, @RequestBody DeviceRequest request) {
        Registration device = registration(deviceId, request, validator, endpoints);
        await(devices.register(app.id(), deviceId, device.channel(), device.token(), device.topics()));
        await(devices.setTimeZone(app.id(), deviceId, device.timeZone()));
        return respond(find(app, deviceId));
    }

    /** A device as the API gives it, checked (400 problems) and normalised: the one reading of a registration. */
    static Registration registration(String deviceId, DeviceRequest request, RequestValidator validator,
                                     WebPushEndpoints endpoints) {
        Ids.deviceId(deviceId);
        validator.validate(request);
        if (request.subscription() != null && request.channel() != Channel.webpush) {
            throw Problems.invalidField("subscription", "is only for the webpush channel");
        }
        // An MQTT device's "token" is its own id: the gateway routes by it.
        String token = switch (request.channel()) {
            case mqtt -> deviceId;
            case webpush -> webPushToken(request, endpoints);
            default -> request.token();
        };
        if (token == null) {
            throw Problems.invalidField("token", "is required for the " + request.channel() + " channel");
        }
        List<String> topics = request.topics() == null ? List.of() : List.copyOf(new LinkedHashSet<>(request.topics()));
        Optional<String> timeZone = Optional.ofNullable(request.timeZone()).map(zone -> TimeZones.parse("timeZone", zone).getId());
        return new Registration(deviceId, request.channel(), token, topics, timeZone);
    }

    /** The subscription checked (endpoint, keys) and carried as the device's token. */
    private static String webPushToken(DeviceRequest request, WebPushEndpoints endpoints) {
        if (request.token() != null) {
            throw Problems.invalidField("token", "is not used by the webpush channel: give the browser's subscription");
        }
        WebPushSubscriptionJson given = request.subscription();
        if (given == null || given.keys() == null) {
            throw Problems.invalidField("subscription", "is required for the webpush channel: the browser's "
                    + "PushSubscription.toJSON() ({\"endpoint\", \"keys\": {\"p256dh\", \"auth\"}})");
        }
        WebPushSubscription subscription = new WebPushSubscription(endpoints.check(given.endpoint()),
                String.valueOf(given.keys().p256dh()).strip(), String.valueOf(given.keys().auth()).strip());
        try {
            subscription.publicKey();
        } catch (IllegalArgumentException e) {
            throw Problems.invalidField("subscription.keys.p256dh", "must be the browser's P-256 public key (65 bytes, base64url)");
        }
        try {
            subscription.authSecret();
        } catch (IllegalArgumentException e) {
            throw Problems.invalidField("subscription.keys.auth", "must be the 16-byte auth secret, base64url");
        }
        return subscription.token();
    }

    @GetMapping("/v1/apps/{appId}/devices/{deviceId}")
    DeviceResponse get(AuthenticatedApp app, @PathVariable String deviceId) {
        Ids.deviceId(deviceId);
        return respond(find(app, deviceId));
    }

    @DeleteMapping("/v1/apps/{appId}/devices/{deviceId}")
    ResponseEntity<Void> delete(AuthenticatedApp app, @PathVariable String deviceId) {
        Ids.deviceId(deviceId);
        Device device = find(app, deviceId);
        if (!await(devices.unregister(app.id(), deviceId))) {
            throw unknown(deviceId);
        }
        if (device.channel() == Channel.mqtt) {
            // Its password is derived, not stored: without this it would still connect after removal.
            revoker.disconnect(app.id(), deviceId, revoker.revoke(app.id(), deviceId));
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
        return describe(device, credentials, generations, sessions);
    }

    /**
     * A device as the API shows it (also the console's device search): an MQTT device with its current
     * password, its last CONNECT and whether it is connected now.
     */
    public static DeviceResponse describe(Device device, MqttCredentials credentials, CredentialGenerations generations,
                                          DeviceSessions sessions) {
        if (device.channel() != Channel.mqtt) {
            return DeviceResponse.of(device, null, null);
        }
        CompletableFuture<Long> generation = generations.current(device.appId(), device.deviceId());
        CompletableFuture<DeviceSessions.Presence> presence = sessions.presence(device.appId(), device.deviceId());
        return DeviceResponse.of(device, credentials.password(device.appId(), device.deviceId(), await(generation)),
                await(presence));
    }

    private Device find(AuthenticatedApp app, String deviceId) {
        return await(devices.find(app.id(), deviceId)).orElseThrow(() -> unknown(deviceId));
    }

    private static RuntimeException unknown(String deviceId) {
        return Problems.notFound("device " + deviceId + " is not registered");
    }
}
