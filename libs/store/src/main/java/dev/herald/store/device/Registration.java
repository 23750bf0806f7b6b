package dev.herald.store.device;

import dev.herald.contract.Channel;
import java.util.List;
import java.util.Optional;

/**
 * One device as a bulk import registers it: replaced whole, like a single registration, its time
 * zone included (absent: the device has none).
 */
public record Registration(String deviceId, Channel channel, String token, List<String> topics, Optional<String> timeZone) {
    public Registration {
        topics = List.copyOf(topics);
    }
}
