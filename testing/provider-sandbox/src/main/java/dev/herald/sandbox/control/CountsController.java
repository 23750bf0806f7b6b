package dev.herald.sandbox.control;

import dev.herald.sandbox.counts.DeliveryCounts;
import dev.herald.sandbox.counts.Stats;
import dev.herald.sandbox.counts.TokenCounts;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/** What arrived: per token, in total, and a reset between test cases. */
@RestController
@RequestMapping("/sandbox")
class CountsController {
    private final DeliveryCounts counts;

    CountsController(DeliveryCounts counts) {
        this.counts = counts;
    }

    @GetMapping("/received")
    TokenCounts received(@RequestParam String token) {
        return counts.received(token);
    }

    @GetMapping("/stats")
    Stats stats() {
        return counts.stats();
    }

    /** Clears counts and per-token attempts; fault settings and issued access tokens stay. */
    @PostMapping("/reset")
    ResponseEntity<Void> reset() {
        counts.reset();
        return ResponseEntity.noContent().build();
    }
}
