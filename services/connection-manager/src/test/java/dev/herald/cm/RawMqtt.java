package dev.herald.cm;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/**
 * A bare TCP connection speaking just enough MQTT 5 by hand to send what no client library would:
 * malformed and oversized packets. Test-only; the server uses Netty's codec.
 */
final class RawMqtt implements AutoCloseable {
    private final Socket socket;
    private final InputStream in;

    RawMqtt(int port) throws IOException {
        socket = new Socket("127.0.0.1", port);
        socket.setSoTimeout(15_000);
        in = socket.getInputStream();
    }

    /** MQTT 5 CONNECT with username and password; returns the CONNACK reason code. */
    int connect(Herald.Device device) throws IOException {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        string(body, "MQTT");
        body.write(5);            // protocol level: MQTT 5
        body.write(0xC2);         // username, password, clean start
        body.write(0);
        body.write(60);           // keepalive 60 s
        body.write(0);            // no properties
        string(body, device.deviceId());
        string(body, device.appId());
        string(body, device.password());
        send(0x10, body.toByteArray());
        int[] packet = readPacket();
        if (packet[0] != 0x20) {
            throw new AssertionError("expected CONNACK, got packet type " + Integer.toHexString(packet[0]));
        }
        return packet[2];
    }

    void send(int firstByte, byte[] body) throws IOException {
        ByteArrayOutputStream packet = new ByteArrayOutputStream();
        packet.write(firstByte);
        int length = body.length;
        do {
            int digit = length % 128;
            length /= 128;
            packet.write(length > 0 ? digit | 0x80 : digit);
        } while (length > 0);
        packet.write(body);
        socket.getOutputStream().write(packet.toByteArray());
        socket.getOutputStream().flush();
    }

    /** Reads one packet: {type byte, remaining length, first body byte or -1}; the rest is skipped. */
    int[] readPacket() throws IOException {
        int type = in.read();
        if (type < 0) {
            return new int[] {-1, 0, -1};
        }
        int length = 0;
        int shift = 0;
        int digit;
        do {
            digit = in.read();
            length |= (digit & 0x7F) << shift;
            shift += 7;
        } while ((digit & 0x80) != 0);
        byte[] rest = in.readNBytes(length);
        // CONNACK: flags then reason; DISCONNECT: reason first.
        int reason = type == 0x20 ? (rest.length > 1 ? rest[1] & 0xFF : -1) : (rest.length > 0 ? rest[0] & 0xFF : -1);
        return new int[] {type, length, reason};
    }

    /** True once the server closed the connection (end of stream). */
    boolean closedByServer() throws IOException {
        return in.read() < 0;
    }

    private static void string(ByteArrayOutputStream out, String value) {
        byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
        out.write(bytes.length >> 8);
        out.write(bytes.length & 0xFF);
        out.writeBytes(bytes);
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
