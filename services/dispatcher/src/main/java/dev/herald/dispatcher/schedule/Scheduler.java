package dev.herald.dispatcher.schedule;

import static dev.herald.dispatcher.Futures.await;

import dev.herald.contract.Target;
import dev.herald.contract.amqp.PublishFailedException;
import dev.herald.dispatcher.DispatcherProperties;
import dev.herald.dispatcher.send.SendRequest;
import dev.herald.dispatcher.send.SendService;
import dev.herald.store.device.DeviceRegistry;
import dev.herald.store.device.DeviceRegistry.Resolved;
import dev.herald.store.device.DeviceRegistry.ZonedTarget;
import dev.herald.store.device.TopicPage;
import dev.herald.store.schedule.ScheduledSends;
import dev.herald.store.schedule.ScheduledSends.Due;
import dev.herald.store.schedule.ScheduledSends.Payload;
import dev.herald.store.status.MessageCancels;
import dev.herald.store.status.MessageStatus;
import dev.herald.store.status.MessageStatusStore;
import java.time.Clock;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;
import tools.jackson.databind.json.JsonMapper;

/**
 * Fires scheduled sends on every dispatcher replica: each {@code poll-interval} it claims the zone
 * groups due by the {@link Clock} (an atomic claim in Redis: one replica per group) and publishes
 * each through the send path, RabbitMQ with publisher confirms, as an immediate send is.
 *
 * <p>Why a lease and not "remove, then publish": a replica that dies after removing an entry and
 * before RabbitMQ confirmed it would lose the send. Under a lease it publishes first and removes
 * after, so dying anywhere leaves the entry to fire again when the lease ends; what that second
 * firing publishes again is recognised downstream (see {@link ScheduledSends}). Each group is
 * released ({@link MessageCancels#release}) right before it is published: the release and a cancel
 * are each one step on the message's slot, so a message cancelled first is never queued (its groups
 * leave the schedule marked fired with no targets), and one released first is cancelled downstream.
 */
public final class Scheduler implements SmartLifecycle {
    private static final Logger log = LoggerFactory.getLogger(Scheduler.class);
    /** Batch numbers reserved per zone group, so two groups of a message never share a number. */
    static final int BATCHES_PER_GROUP = 1_000_000;

    private final ScheduledSends sends;
    private final MessageStatusStore status;
    private final MessageCancels cancels;
    private final DeviceRegistry devices;
    private final SendService sendService;
    private final ScheduleService schedule;
    private final ScheduleProperties properties;
    private final int batchSize;
    private final JsonMapper json;
    private final Clock clock;
    private final ScheduleMetrics metrics;
    private volatile ScheduledExecutorService executor;

    public Scheduler(ScheduledSends sends, MessageStatusStore status, MessageCancels cancels, DeviceRegistry devices,
                     SendService sendService, ScheduleService schedule, ScheduleProperties properties,
                     DispatcherProperties dispatcher, JsonMapper json, Clock clock, ScheduleMetrics metrics) {
        this.sends = sends;
        this.status = status;
        this.cancels = cancels;
        this.devices = devices;
        this.sendService = sendService;
        this.schedule = schedule;
        this.properties = properties;
        this.batchSize = dispatcher.batchSize();
        this.json = json;
        this.clock = clock;
        this.metrics = metrics;
    }

    @Override
    public void start() {
        executor = Executors.newSingleThreadScheduledExecutor(Thread.ofPlatform().name("scheduler").daemon().factory());
        executor.scheduleWithFixedDelay(this::tick, 0, properties.pollInterval().toMillis(), TimeUnit.MILLISECONDS);
    }

    @Override
    public void stop() {
        ScheduledExecutorService running = executor;
        executor = null;
        running.shutdown();
        try {
            // A group being published is left to finish; one cut short fires again after its lease.
            running.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public boolean isRunning() {
        return executor != null;
    }

    /**
     * One look: claim what is due and fire it. Failures are logged; the groups fire after their lease.
     * The executor runs it every poll-interval; tests call it after moving the clock.
     */
    public void tick() {
        try {
            for (Due due : await(sends.claim(clock.instant(), properties.lease(), properties.claimBatch()))) {
                try {
                    fire(due);
                } catch (RuntimeException | PublishFailedException e) {
                    log.warn("scheduled send {} (group due {}) not published, retried after the lease ({}): {}",
                            due.messageId(), due.dueAt(), properties.lease(), e.toString());
                }
            }
            metrics.pending(await(sends.pending()));
        } catch (RuntimeException e) {
            log.warn("cannot read the schedule: {}", e.toString());
        }
    }

    private void fire(Due due) throws PublishFailedException {
        Optional<MessageStatus> found = await(status.find(due.messageId()));
        Optional<Payload> payload = await(sends.load(due.messageId()));
        if (found.isEmpty() || payload.isEmpty()) {
            skip(due, found.isPresent() && !found.get().dueAt().contains(due.dueAt()) ? "fired" : "gone");
            return;
        }
        if (!await(cancels.release(due.messageId()))) {
            // Cancelled: marked fired with no targets, so a local-time send still completes with its last group.
            await(sends.fired(due, Optional.of(0), clock.instant()));
            skip(due, "cancelled");
            return;
        }
        if (!found.get().dueAt().contains(due.dueAt())) {
            skip(due, "fired");
            return;
        }
        SendRequest request = json.readValue(payload.get().request(), SendRequest.class);
        Optional<Integer> targets = Optional.empty();
        if (payload.get().localTime()) {
            targets = Optional.of(fireGroup(payload.get(), due, request));
        } else {
            sendService.fire(payload.get().appId(), due.messageId(), request, found.get().acceptedAt());
        }
        await(sends.fired(due, targets, clock.instant()));
        await(sends.remove(due));
        metrics.fired(payload.get().localTime(), Duration.between(due.dueAt(), clock.instant()));
        log.debug("scheduled send {} fired its group due {} ({} targets)", due.messageId(), due.dueAt(), targets.orElse(-1));
    }

    private void skip(Due due, String reason) {
        await(sends.remove(due));
        metrics.skipped(reason);
        log.info("scheduled send {} (group due {}) skipped: {}", due.messageId(), due.dueAt(), reason);
    }

    /**
     * Publishes the audience of one zone group page by page (the first batches leave before the
     * last page is read) and answers how many targets it published. The audience is read now, so a
     * group fired again after a lost claim reads the same pages in the same order (a set that did not
     * change scans the same) and republishes the same batch numbers.
     */
    private int fireGroup(Payload payload, Due due, SendRequest request) throws PublishFailedException {
        SendRequest.To to = request.to();
        GroupPublisher publisher = new GroupPublisher(payload, due, request, audienceSize(payload.appId(), request));
        if (to.tokens() != null) {
            publisher.publish(to.tokens().stream().map(t -> new Target(t.channel(), t.token(), null)).distinct().toList());
        } else if (to.devices() != null) {
            publisher.publishZoned(await(devices.lookUp(payload.appId(), to.devices().stream().distinct().toList())));
        } else {
            // The next page is read from Redis while this one is published to RabbitMQ.
            CompletableFuture<ResolvedPage> next = readPage(payload.appId(), to.topic(), "0");
            ResolvedPage page;
            do {
                page = await(next);
                if (!page.last()) {
                    next = readPage(payload.appId(), to.topic(), page.cursor());
                }
                publisher.publishZoned(page.devices());
            } while (!page.last());
        }
        return publisher.published;
    }

    /**
     * The whole audience's size, what a spread throttle divides (each group then goes at that rate);
     * read only for a throttled send.
     */
    private long audienceSize(String appId, SendRequest request) {
        SendRequest.To to = request.to();
        if (request.throttle() == null) {
            return 0;
        }
        if (to.tokens() != null) {
            return to.tokens().size();
        }
        return to.devices() != null ? to.devices().stream().distinct().count() : await(devices.topicSize(appId, to.topic()));
    }

    /** One page of a topic with its devices looked up; {@code cursor} continues the scan ("0": done). */
    private record ResolvedPage(Resolved devices, String cursor) {
        boolean last() {
            return "0".equals(cursor);
        }
    }

    private CompletableFuture<ResolvedPage> readPage(String appId, String topic, String cursor) {
        return devices.topicPage(appId, topic, cursor, properties.pageSize()).thenCompose((TopicPage page) ->
                devices.lookUp(appId, page.deviceIds()).thenApply(found -> new ResolvedPage(found, page.cursor())));
    }

    /** Publishes one group's targets as they are read, numbering batches on from the group's first. */
    private final class GroupPublisher {
        private final Payload payload;
        private final Due due;
        private final SendRequest request;
        private final long audienceSize;
        private final LocalDateTime local;
        private final ZoneId fallback;
        private int nextBatch;
        private int published;

        GroupPublisher(Payload payload, Due due, SendRequest request, long audienceSize) {
            this.payload = payload;
            this.due = due;
            this.request = request;
            this.audienceSize = audienceSize;
            this.local = request.sendAtLocalTime();
            this.fallback = schedule.defaultZone(payload.appId());
            this.nextBatch = payload.groups().indexOf(due.group()) * BATCHES_PER_GROUP;
        }

        /** Publishes the page's devices in this group's zones; its stale ones there are counted, not sent. */
        void publishZoned(Resolved page) throws PublishFailedException {
            publish(inGroup(page.devices()).map(ZonedTarget::target).toList());
            await(devices.countStaleSkipped(payload.appId(), (int) inGroup(page.staleDevices()).count()));
        }

        private Stream<ZonedTarget> inGroup(List<ZonedTarget> zoned) {
            return zoned.stream()
                    .filter(device -> TimeZones.at(local, TimeZones.stored(device.timeZone(), fallback)).toEpochMilli() == due.group());
        }

        void publish(List<Target> targets) throws PublishFailedException {
            sendService.fireTargets(payload.appId(), due.messageId(), request, targets, nextBatch, audienceSize);
            nextBatch += (targets.size() + batchSize - 1) / batchSize;
            published += targets.size();
        }
    }
}
