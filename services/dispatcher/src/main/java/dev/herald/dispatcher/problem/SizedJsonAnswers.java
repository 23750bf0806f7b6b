package dev.herald.dispatcher.problem;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.util.Map;
import org.springframework.core.ResolvableType;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpOutputMessage;
import org.springframework.http.server.ServerHttpResponse;
import org.springframework.http.converter.json.JacksonJsonHttpMessageConverter;
import tools.jackson.databind.json.JsonMapper;

/**
 * Writes each JSON answer (problems included) whole, with its {@code Content-Length}. Spring MVC
 * flushes an answer returned as a {@code ResponseEntity} (the send's 202, every problem) before
 * Tomcat knows its length, so Tomcat sent it chunked, the closing chunk in a second socket write;
 * for the 202 those writes were a tenth of the dispatcher's CPU in the accept benchmark's profile.
 * One converter sizes every answer, so no controller has to write bytes itself. The API's answers
 * are small (lists are paged): holding one in memory costs less than the second write. A client's
 * request bodies are written as Spring does.
 */
final class SizedJsonAnswers extends JacksonJsonHttpMessageConverter {

    SizedJsonAnswers(JsonMapper json) {
        super(json);
    }

    @Override
    protected void writeInternal(Object value, ResolvableType type, HttpOutputMessage output, Map<String, Object> hints)
            throws IOException {
        if (!(output instanceof ServerHttpResponse)) {
            super.writeInternal(value, type, output, hints);
            return;
        }
        ByteArrayOutputStream body = new ByteArrayOutputStream(256);
        super.writeInternal(value, type, new HttpOutputMessage() {
            @Override
            public OutputStream getBody() {
                return body;
            }

            @Override
            public HttpHeaders getHeaders() {
                return output.getHeaders();
            }
        }, hints);
        // Set before the body is asked for: the servlet response's headers go out with the first byte.
        output.getHeaders().setContentLength(body.size());
        body.writeTo(output.getBody());
    }
}
