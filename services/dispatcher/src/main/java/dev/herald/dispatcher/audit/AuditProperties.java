package dev.herald.dispatcher.audit;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Settings of the admin audit log ({@code herald.dispatcher.audit.*}).
 *
 * @param retention how long an audit entry is kept; older ones are trimmed as new ones are recorded
 */
@ConfigurationProperties("herald.dispatcher.audit")
public record AuditProperties(@DefaultValue("400d") Duration retention) {
    public AuditProperties {
        if (!retention.isPositive()) {
            throw new IllegalStateException("herald.dispatcher.audit.retention must be positive");
        }
    }
}
