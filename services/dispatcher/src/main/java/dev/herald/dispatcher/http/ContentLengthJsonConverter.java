package dev.herald.dispatcher.http;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.util.Map;
import org.springframework.core.ResolvableType;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpOutputMessage;
import org.springframework.http.converter.json.JacksonJsonHttpMessageConverter;
import tools.jackson.databind.json.JsonMapper;

/**
 * Spring's JSON converter, writing a body with its {@code Content-Length}: it serialises into a
 * buffer first, then sets the length and writes the buffer.
 *
 * <p>Why: the stock converter streams, and Spring flushes the body before Tomcat ends the response,
 * so every JSON answer went out chunked, in two socket writes (headers and body, then the 5-byte
 * last chunk). On the accept benchmark's profile (docs/perf/accept-dispatcher.md) that last write
 * was 2.8 % of the dispatcher's CPU. With the length known, Tomcat writes the whole answer once.
 * The API's bodies are small (page sizes are capped), so holding one in memory costs nothing.
 */
public final class ContentLengthJsonConverter extends JacksonJsonHttpMessageConverter {

    public ContentLengthJsonConverter(JsonMapper json) {
        super(json);
    }

    @Override
    protected void writeInternal(Object value, ResolvableType type, HttpOutputMessage output, Map<String, Object> hints)
            throws IOException {
        ByteArrayOutputStream body = new ByteArrayOutputStream(256);
        super.writeInternal(value, type, new Buffered(body, output.getHeaders()), hints);
        output.getHeaders().setContentLength(body.size());
        body.writeTo(output.getBody());
    }

    /** The response's headers, with the body going to a buffer. */
    private record Buffered(ByteArrayOutputStream body, HttpHeaders headers) implements HttpOutputMessage {
        @Override
        public OutputStream getBody() {
            return body;
        }

        @Override
        public HttpHeaders getHeaders() {
            return headers;
        }
    }
}
