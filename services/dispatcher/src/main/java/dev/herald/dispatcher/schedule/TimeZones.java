package dev.herald.dispatcher.schedule;

import dev.herald.dispatcher.problem.Problems;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.util.Optional;
import java.util.Set;

/** IANA time zone ids as devices and apps give them, and where a local time falls in a zone. */
public final class TimeZones {
    /** Zone of devices that registered none in an app that set no default. */
    public static final ZoneId FALLBACK = ZoneId.of("UTC");
    private static final Set<String> KNOWN = ZoneId.getAvailableZoneIds();

    private TimeZones() {
    }

    /** The zone named, or a 400 problem on {@code field} when it is not an IANA zone id. */
    public static ZoneId parse(String field, String zone) {
        if (zone == null || !KNOWN.contains(zone)) {
            throw Problems.invalidField(field, "must be an IANA time zone id such as Europe/Paris or America/New_York");
        }
        return ZoneId.of(zone);
    }

    /** A zone stored earlier (checked when it was stored), or the default. */
    static ZoneId stored(Optional<String> zone, ZoneId otherwise) {
        return zone.filter(KNOWN::contains).map(ZoneId::of).orElse(otherwise);
    }

    /** Every zone the time zone database knows: the candidates for a topic's audience. */
    static Set<String> all() {
        return KNOWN;
    }

    /**
     * The instant {@code local} is in {@code zone}. In a gap (clocks moved forward) it is the time
     * after the gap; in an overlap (clocks moved back) the earlier of the two.
     */
    static Instant at(LocalDateTime local, ZoneId zone) {
        return local.atZone(zone).toInstant();
    }
}
