package dev.herald.dispatcher.mqtt;

import static dev.herald.dispatcher.Futures.await;

import dev.herald.contract.MqttRevocation;
import dev.herald.contract.Queues;
import dev.herald.contract.amqp.ConfirmedPublisher;
import dev.herald.contract.amqp.PublishFailedException;
import dev.herald.dispatcher.problem.Problems;
import dev.herald.store.mqtt.CredentialGenerations;
import dev.herald.store.mqtt.DeviceSessions;
import dev.herald.store.mqtt.MqttAddresses;
import java.util.Map;
import java.util.concurrent.CompletionException;
import org.springframework.stereotype.Component;

/**
 * Ends a device's MQTT password: its credential generation moves on, so the password it has is
 * refused at every CONNECT, and a connection it holds now is closed by its node (MQTT 5: DISCONNECT
 * 0x87). The one way to do it, for the admin's revocation and for a device its app unregisters
 * (passwords are derived, so an unregistered device's password would otherwise still connect).
 */
@Component
public class MqttCredentialRevoker {
    private final CredentialGenerations generations;
    private final ConfirmedPublisher publisher;

    public MqttCredentialRevoker(CredentialGenerations generations, ConfirmedPublisher publisher) {
        this.generations = generations;
        this.publisher = publisher;
    }

    /** Moves the device's generation on; the returned revocation's {@link #disconnect} closes its connection. */
    public CredentialGenerations.Revoked revoke(String appId, String deviceId) {
        return await(generations.revoke(appId, deviceId));
    }

    /**
     * Tells the node holding the device, if any, to close that connection. A node that is gone has
     * no queue (unroutable): its connections are gone too. Any other failure is a 503: the password
     * is revoked, but the connection may still be open; revoking again closes it.
     */
    public void disconnect(String appId, String deviceId, CredentialGenerations.Revoked revoked) {
        revoked.connected().ifPresent(holder -> disconnect(appId, deviceId, holder));
    }

    private void disconnect(String appId, String deviceId, DeviceSessions.Holder holder) {
        try {
            await(publisher.publish(new ConfirmedPublisher.Outgoing(Queues.EXCHANGE, MqttAddresses.nodeQueue(holder.nodeId()),
                    "revoked-" + appId + "/" + deviceId + "/" + holder.connectionId(),
                    new MqttRevocation(appId, deviceId, holder.connectionId()), Map.of(MqttRevocation.HEADER, "1"))));
        } catch (CompletionException e) {
            if (!(e.getCause() instanceof PublishFailedException failed && failed.reason() == PublishFailedException.Reason.unroutable)) {
                throw Problems.unavailable("the credentials are revoked, but the device's connection could not be closed: revoke again", 1);
            }
        }
    }
}
