/**
 * Sends for later: {@code sendAt} (an instant) and {@code sendAtLocalTime} (a wall-clock time in each
 * device's own time zone). {@link dev.herald.dispatcher.schedule.ScheduleService} checks the time and
 * stores the send in Redis (libs/store's {@code ScheduledSends}); {@link dev.herald.dispatcher.schedule.Scheduler}
 * claims due groups on every dispatcher replica (each group once, under a lease) and publishes them
 * through the send path. Time is the application's {@link java.time.Clock}, so tests move it.
 */
package dev.herald.dispatcher.schedule;
