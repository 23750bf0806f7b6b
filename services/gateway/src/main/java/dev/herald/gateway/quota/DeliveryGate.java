package dev.herald.gateway.quota;

import dev.herald.contract.Channel;
import dev.herald.contract.PushBatch;
import dev.herald.contract.Target;
import dev.herald.gateway.GatewayProperties;
import dev.herald.store.app.App;
import dev.herald.store.quota.RateBuckets;
import dev.herald.store.quota.RateBuckets.Grant;
import dev.herald.store.quota.RateBuckets.Limit;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Decides which targets of a batch may go to their provider now: one bucket call per throttled
 * message and one per provider in the batch, whatever the batch's size. A throttled message's tokens
 * are taken first; those its targets then cannot use for want of a provider token are not given
 * back, which only ever slows the message. Retries after a 5xx or a transport failure reuse the
 * first attempt's token (the retry policy bounds them). A provider's 429 pauses the
 * app there on every replica (Redis), and at once on this one (a local note, so targets of batches
 * already admitted here stop too).
 */
public final class DeliveryGate {
    /** Channels a provider counts against a quota; MQTT is Herald's own. */
    private static final List<Channel> QUOTA_CHANNELS = List.of(Channel.fcm, Channel.apns);

    /** Targets to send now, and those to park with how long until the next token (the shortest wait). */
    public record Admission(List<Target> now, List<Target> later, Duration nextTokenIn, Cause cause) {
    }

    /**
     * Why targets wait: the message's own throttle, the app's provider quota (or a pause another
     * request's 429 started), or their own request's 429.
     */
    public enum Cause { none, throttle, quota, paused }

    private final RateBuckets buckets;
    private final GatewayProperties.Quota defaults;
    private final QuotaMetrics metrics;
    private final Clock clock;
    private final Map<String, Instant> pausedHere = new ConcurrentHashMap<>();

    public DeliveryGate(RateBuckets buckets, GatewayProperties.Quota defaults, QuotaMetrics metrics, Clock clock) {
        this.buckets = buckets;
        this.defaults = defaults;
        this.metrics = metrics;
        this.clock = clock;
    }

    public Mono<Admission> admit(App app, PushBatch batch, List<Target> pending) {
        if (pending.isEmpty() || batch.expiredAt(clock.instant())) {
            return Mono.just(new Admission(pending, List.of(), Duration.ZERO, Cause.none)); // recorded as expired, not sent
        }
        if (batch.throttlePerMinute() == null) {
            return byProvider(app, pending, List.of(), Duration.ZERO, Cause.none);
        }
        return Mono.fromFuture(() -> buckets.takeMessage(batch.messageId(), Limit.perMinute(batch.throttlePerMinute()), pending.size()))
                .flatMap(grant -> byProvider(app, pending.subList(0, grant.granted()),
                        pending.subList(grant.granted(), pending.size()), grant.nextTokenIn(),
                        grant.all(pending.size()) ? Cause.none : Cause.throttle));
    }

    /** Takes each provider's tokens for its share of {@code candidates}; what gets none joins {@code waiting}. */
    private Mono<Admission> byProvider(App app, List<Target> candidates, List<Target> waiting, Duration wait, Cause cause) {
        Map<Channel, List<Target>> byChannel = new EnumMap<>(Channel.class);
        List<Target> now = new ArrayList<>();
        for (Target target : candidates) {
            if (QUOTA_CHANNELS.contains(target.channel())) {
                byChannel.computeIfAbsent(target.channel(), c -> new ArrayList<>()).add(target);
            } else {
                now.add(target);
            }
        }
        return Flux.fromIterable(byChannel.entrySet())
                .flatMap(group -> take(app, group.getKey(), group.getValue().size())
                        .map(grant -> Map.entry(group.getValue(), grant)))
                .collectList()
                .map(grants -> {
                    List<Target> later = new ArrayList<>(waiting);
                    Duration shortest = waiting.isEmpty() ? null : wait;
                    Cause why = cause;
                    for (Map.Entry<List<Target>, Grant> entry : grants) {
                        List<Target> targets = entry.getKey();
                        Grant grant = entry.getValue();
                        now.addAll(targets.subList(0, grant.granted()));
                        if (!grant.all(targets.size())) {
                            later.addAll(targets.subList(grant.granted(), targets.size()));
                            shortest = shortest == null || grant.nextTokenIn().compareTo(shortest) < 0 ? grant.nextTokenIn() : shortest;
                            why = Cause.quota;
                        }
                    }
                    return new Admission(now, later, shortest == null ? Duration.ZERO : shortest, why);
                });
    }

    private Mono<Grant> take(App app, Channel channel, int wanted) {
        String key = pauseKey(app.id(), channel);
        Instant paused = pausedHere.get(key);
        Instant now = clock.instant();
        if (paused != null && paused.isAfter(now)) {
            return Mono.just(new Grant(0, Duration.between(now, paused)));
        }
        if (paused != null) {
            pausedHere.remove(key, paused); // over: Redis answers for it again
        }
        return Mono.fromFuture(() -> buckets.takeProvider(app.id(), channel.name(), limit(app, channel), wanted));
    }

    /** Whether this replica knows the app to be paused at the provider now (checked before each request). */
    public boolean pausedHere(String appId, Channel channel) {
        Instant paused = pausedHere.get(pauseKey(appId, channel));
        return paused != null && paused.isAfter(clock.instant());
    }

    /**
     * The provider answered 429: the app pauses there on every replica for the Retry-After (or the
     * default pause when none came), capped so one answer cannot stop an app for long.
     */
    public Mono<Void> providerThrottled(String appId, Channel channel, Duration retryAfter) {
        Duration pause = retryAfter.isZero() ? defaults.defaultPause() : retryAfter;
        pause = pause.compareTo(defaults.maxPause()) > 0 ? defaults.maxPause() : pause;
        Instant until = clock.instant().plus(pause);
        pausedHere.merge(pauseKey(appId, channel), until, (a, b) -> a.isAfter(b) ? a : b);
        metrics.providerThrottled(appId, channel);
        return Mono.fromFuture(() -> buckets.pauseProvider(appId, channel.name(), until)).then();
    }

    private Limit limit(App app, Channel channel) {
        Long own = channel == Channel.fcm ? app.limits().fcmPerMinute() : app.limits().apnsPerMinute();
        long perMinute = own != null ? own : channel == Channel.fcm ? defaults.fcmPerMinute() : defaults.apnsPerMinute();
        return perMinute <= 0 ? Limit.UNLIMITED : Limit.perMinute(perMinute);
    }

    private static String pauseKey(String appId, Channel channel) {
        return appId + "/" + channel.name();
    }
}
