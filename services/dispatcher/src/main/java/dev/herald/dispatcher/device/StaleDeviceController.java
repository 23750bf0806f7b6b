package dev.herald.dispatcher.device;

import static dev.herald.dispatcher.Futures.await;

import com.fasterxml.jackson.annotation.JsonInclude;
import dev.herald.dispatcher.auth.AppApi;
import dev.herald.dispatcher.auth.AuthenticatedApp;
import dev.herald.dispatcher.problem.PageLimits;
import dev.herald.dispatcher.problem.Problems;
import dev.herald.store.device.StaleTokens;
import java.util.List;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code GET .../stale-devices}: the app's devices whose token was not refreshed (registered again)
 * for {@code herald.tokens.stale-after}, oldest first, a page at a time. Fan-outs leave them out;
 * the token sweep removes them after {@code herald.tokens.remove-after}.
 */
@AppApi
@RestController
public class StaleDeviceController {
    static final int MAX_LIMIT = 1000;

    /** One page; {@code next} is the cursor of the following page, absent after the last. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record StalePage(List<StaleTokens.StaleDevice> devices, String next) {
    }

    private final StaleTokens stale;

    public StaleDeviceController(StaleTokens stale) {
        this.stale = stale;
    }

    @GetMapping("/v1/apps/{appId}/stale-devices")
    StalePage list(AuthenticatedApp app, @RequestParam(required = false) String cursor,
                   @RequestParam(required = false) String limit) {
        int pageSize = PageLimits.parse(limit, 100, MAX_LIMIT);
        try {
            StaleTokens.Page page = await(stale.page(app.id(), cursor, pageSize));
            return new StalePage(page.devices(), page.next());
        } catch (IllegalArgumentException e) {
            throw Problems.invalidField("cursor", "is not a cursor this API returned");
        }
    }
}
