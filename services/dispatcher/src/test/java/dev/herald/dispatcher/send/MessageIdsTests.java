package dev.herald.dispatcher.send;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class MessageIdsTests {

    @Test
    void idsAreVersion7UuidsThatSortByTime() {
        String earlier = MessageIds.next(1_700_000_000_000L);
        String later = MessageIds.next(1_700_000_000_001L);
        UUID uuid = UUID.fromString(earlier);
        assertThat(uuid.version()).isEqualTo(7);
        assertThat(uuid.variant()).isEqualTo(2);
        assertThat(earlier.compareTo(later)).isNegative();
        assertThat(uuid.getMostSignificantBits() >>> 16).isEqualTo(1_700_000_000_000L);
    }

    @Test
    void idsAreUnique() {
        Set<String> ids = new HashSet<>();
        for (int i = 0; i < 100_000; i++) {
            ids.add(MessageIds.next(42));
        }
        assertThat(ids).hasSize(100_000);
    }
}
