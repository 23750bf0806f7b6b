package dev.herald.dispatcher.send;

import static dev.herald.dispatcher.Futures.await;

import com.fasterxml.jackson.annotation.JsonInclude;
import dev.herald.contract.Channel;
import dev.herald.contract.PushBatch;
import dev.herald.contract.Target;
import dev.herald.contract.payload.ApnsPayloads;
import dev.herald.contract.payload.FcmRequests;
import dev.herald.contract.payload.MqttPayloads;
import dev.herald.dispatcher.DispatcherProperties;
import dev.herald.dispatcher.auth.AppApi;
import dev.herald.dispatcher.auth.AuthenticatedApp;
import dev.herald.dispatcher.problem.RequestValidator;
import dev.herald.store.app.ApnsCredential;
import dev.herald.store.app.AppStore;
import dev.herald.store.device.DeviceRegistry;
import java.time.Clock;
import java.time.Instant;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code POST /v1/apps/{appId}/previews}: what FCM, APNs and an MQTT device would receive
 * for a send, built by the same code the gateway sends with ({@code dev.herald.contract.payload}),
 * without sending or recording anything. The request is checked exactly as a send is.
 */
@AppApi
@RestController
public class PreviewController {
    /** Stands in for the token of a target not known before the gateway expands a topic. */
    static final String EACH_TARGET = "<each device's token>";

    /**
     * One channel's preview.
     *
     * @param target  the token or device id of the first such target, or {@link #EACH_TARGET}
     * @param headers the provider's request headers that depend on the message (APNs)
     * @param body    the exact JSON the provider (or the device, for MQTT) receives
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record ChannelPreview(String target, Map<String, String> headers, Map<String, Object> body) {
    }

    /**
     * @param messageId an id of the form the message would carry (a real send gets its own)
     * @param channels  one preview per channel the audience reaches (every channel for a topic)
     */
    public record Preview(String messageId, Map<Channel, ChannelPreview> channels) {
    }

    private final RequestValidator validator;
    private final DispatcherProperties properties;
    private final DeviceRegistry devices;
    private final AppStore apps;
    private final JsonMapper json;
    private final Clock clock;
    private final SendScheduler scheduler;

    public PreviewController(RequestValidator validator, DispatcherProperties properties, DeviceRegistry devices,
                             AppStore apps, JsonMapper json, Clock clock, SendScheduler scheduler) {
        this.validator = validator;
        this.properties = properties;
        this.devices = devices;
        this.apps = apps;
        this.json = json;
        this.clock = clock;
        this.scheduler = scheduler;
    }

    @PostMapping("/v1/apps/{appId}/previews")
    Preview preview(AuthenticatedApp app, @RequestBody SendRequest request) {
        validator.validate(request);
        SendPlan plan = SendPlan.of(request, properties, json);
        if (request.scheduled()) {
            scheduler.dueTimes(app.id(), request);   // the same 400s as a send for a past, distant or doubled time
        }
        Instant now = clock.instant();
        String messageId = MessageIds.next(now.toEpochMilli());
        PushBatch batch = new PushBatch(messageId, app.id(), 0, plan.priority(), plan.notification(), plan.collapseKey(),
                now, now.plus(plan.ttl()), List.of(), null);
        Map<Channel, ChannelPreview> channels = new EnumMap<>(Channel.class);
        for (Target target : audience(app.id(), plan)) {
            if (!channels.containsKey(target.channel())) {
                channels.put(target.channel(), preview(app.id(), batch, target, now));
            }
        }
        return new Preview(messageId, channels);
    }

    /** The known targets; for a topic, one stand-in per channel. */
    private List<Target> audience(String appId, SendPlan plan) {
        return switch (plan.kind()) {
            case tokens -> plan.targets();
            case devices -> await(devices.lookUp(appId, plan.deviceIds())).devices().stream()
                    .map(DeviceRegistry.ZonedTarget::target).toList();
            case topic -> List.of(Channel.values()).stream().map(channel -> new Target(channel, EACH_TARGET, null)).toList();
        };
    }

    private ChannelPreview preview(String appId, PushBatch batch, Target target, Instant now) {
        return switch (target.channel()) {
            case fcm -> new ChannelPreview(target.token(), null, FcmRequests.body(batch, target, now));
            case apns -> new ChannelPreview(target.token(), ApnsPayloads.headers(batch,
                    await(apps.load(appId)).flatMap(loaded -> loaded.apns()).map(ApnsCredential::topic)),
                    ApnsPayloads.payload(batch));
            case mqtt -> new ChannelPreview(target.token(), null, MqttPayloads.payload(batch));
            // A channel added later without a preview yet: named, with nothing built for it.
            default -> new ChannelPreview(target.token(), null, null);
        };
    }
}
