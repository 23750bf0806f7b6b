package dev.herald.store.device;

import java.util.List;

/** One page of a topic's subscribers; {@code cursor} is "0" when the scan is complete. */
public record TopicPage(List<String> deviceIds, String cursor) {
    public boolean last() {
        return "0".equals(cursor);
    }
}
