package dev.herald.dispatcher.device;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

/**
 * The lines of a stream read as it arrives, each kept only up to a limit, so a body of any length
 * (or one endless line) never holds more than one line in memory. Lines end with LF or CRLF.
 */
final class BoundedLines {
    /** A line and its number (from 1); {@code text} is null when the line was longer than the limit. */
    record Line(long number, String text) {
        boolean tooLong() {
            return text == null;
        }
    }

    private final InputStream in;
    private final byte[] buffer = new byte[64 * 1024];
    private final byte[] line;
    private int position;
    private int end;
    private long number;

    BoundedLines(InputStream in, int maxLineBytes) {
        this.in = in;
        this.line = new byte[maxLineBytes];
    }

    /** The next line, or null at the end of the stream. */
    Line next() throws IOException {
        int length = 0;
        boolean tooLong = false;
        boolean read = false;
        while (true) {
            if (position == end && !fill()) {
                if (!read) {
                    return null;
                }
                break;
            }
            read = true;
            byte b = buffer[position++];
            if (b == '\n') {
                break;
            }
            if (length < line.length) {
                line[length++] = b;
            } else {
                tooLong = true;
            }
        }
        number++;
        if (tooLong) {
            return new Line(number, null);
        }
        if (length > 0 && line[length - 1] == '\r') {
            length--;
        }
        return new Line(number, new String(line, 0, length, StandardCharsets.UTF_8));
    }

    private boolean fill() throws IOException {
        int n = in.read(buffer, 0, buffer.length);
        position = 0;
        end = Math.max(n, 0);
        return n > 0;
    }
}
