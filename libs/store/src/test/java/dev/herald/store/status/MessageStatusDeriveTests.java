package dev.herald.store.status;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class MessageStatusDeriveTests {

    @Test
    void isAcceptedUntilQueuedAndQueuedUntilAnOutcome() {
        assertThat(MessageStatus.derive(false, false, 3, 0, 0, 0, 0)).isEqualTo("accepted");
        assertThat(MessageStatus.derive(true, false, 3, 0, 0, 0, 0)).isEqualTo("queued");
    }

    @Test
    void isSendingOnceAnyTargetIsDoneButNotAll() {
        assertThat(MessageStatus.derive(true, false, 3, 1, 0, 0, 0)).isEqualTo("sending");
        assertThat(MessageStatus.derive(true, false, 3, 0, 1, 0, 0)).isEqualTo("sending");
        assertThat(MessageStatus.derive(true, false, 3, 0, 0, 1, 0)).isEqualTo("sending");
        // An outcome can be recorded before the publisher confirm arrives.
        assertThat(MessageStatus.derive(false, false, 3, 1, 0, 0, 0)).isEqualTo("sending");
    }

    @Test
    void isSentWhenCompleteWithAtLeastOneDelivery() {
        assertThat(MessageStatus.derive(true, true, 3, 1, 1, 1, 0)).isEqualTo("sent");
        assertThat(MessageStatus.derive(true, true, 3, 3, 0, 0, 0)).isEqualTo("sent");
    }

    @Test
    void isExpiredOnlyWhenEveryTargetExpired() {
        assertThat(MessageStatus.derive(true, true, 3, 0, 0, 3, 0)).isEqualTo("expired");
        assertThat(MessageStatus.derive(true, true, 3, 0, 1, 2, 0)).isEqualTo("failed");
    }

    @Test
    void isFailedWhenCompleteWithoutAnyDelivery() {
        assertThat(MessageStatus.derive(true, true, 3, 0, 3, 0, 0)).isEqualTo("failed");
        // An empty audience completes with nothing delivered (and nothing expired).
        assertThat(MessageStatus.derive(true, true, 0, 0, 0, 0, 0)).isEqualTo("failed");
    }

    @Test
    void pendingIsWhatIsLeftAndNeverNegative() {
        MessageStatus status = new MessageStatus("m", "a", "sending", 5, 1, 1, 1, 0, true, 0, java.util.Map.of(), null, null, null, 0, null, java.util.List.of());
        MessageStatus over = new MessageStatus("m", "a", "sent", 1, 2, 0, 0, 0, true, 0, java.util.Map.of(), null, null, null, 0, null, java.util.List.of());

        assertThat(status.pending()).isEqualTo(2);
        assertThat(over.pending()).isZero();
    }
}
