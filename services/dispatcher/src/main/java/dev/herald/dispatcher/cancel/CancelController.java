package dev.herald.dispatcher.cancel;

import static dev.herald.dispatcher.Futures.await;

import dev.herald.dispatcher.Ids;
import dev.herald.dispatcher.auth.AppApi;
import dev.herald.dispatcher.auth.AuthenticatedApp;
import dev.herald.dispatcher.problem.Problems;
import dev.herald.dispatcher.status.StatusController;
import dev.herald.dispatcher.status.StatusController.MessageView;
import dev.herald.store.status.Cancellation;
import dev.herald.store.status.MessageCancels;
import dev.herald.store.status.MessageStatusStore;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code DELETE .../messages/{id}}: cancels what of a message is not sent yet. The answer is the
 * message's status: 202 while the gateways are still ending its queued targets ({@code cancelling}),
 * 200 once nothing is left to do (a scheduled message, or a repeated cancel); 409 when every target
 * already had an outcome.
 */
@AppApi
@RestController
public class CancelController {
    private final MessageCancels cancels;
    private final MessageStatusStore status;

    public CancelController(MessageCancels cancels, MessageStatusStore status) {
        this.cancels = cancels;
        this.status = status;
    }

    @DeleteMapping("/v1/apps/{appId}/messages/{messageId}")
    ResponseEntity<MessageView> cancel(AuthenticatedApp app, @PathVariable String messageId) {
        if (!Ids.isMessageId(messageId)) {
            throw StatusController.noMessage(messageId);
        }
        Cancellation cancellation = await(cancels.cancel(messageId, app.id()));
        if (cancellation == Cancellation.NOT_FOUND) {
            throw StatusController.noMessage(messageId);
        }
        if (cancellation == Cancellation.FINISHED) {
            throw Problems.conflict("message " + messageId + " is finished: every target already has an outcome, nothing is left to cancel");
        }
        MessageView view = await(status.find(messageId)).map(MessageView::of).orElseThrow(() -> StatusController.noMessage(messageId));
        HttpStatus code = view.completedAt() == null ? HttpStatus.ACCEPTED : HttpStatus.OK;
        return ResponseEntity.status(code).body(view);
    }
}
