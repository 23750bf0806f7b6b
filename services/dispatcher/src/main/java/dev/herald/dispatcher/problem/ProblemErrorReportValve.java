package dev.herald.dispatcher.problem;

import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import org.apache.catalina.connector.Request;
import org.apache.catalina.connector.Response;
import org.apache.catalina.valves.ErrorReportValve;
import org.springframework.http.ProblemDetail;
import org.springframework.http.MediaType;

/**
 * Tomcat's last resort for errors it raises itself before any servlet runs (a request line it
 * refuses, such as an encoded NUL in the path): a minimal problem instead of an HTML page.
 * Errors inside the application never get here; they are answered by {@link ProblemHandler} or
 * {@link ProblemErrorController}.
 */
public final class ProblemErrorReportValve extends ErrorReportValve {

    @Override
    protected void report(Request request, Response response, Throwable throwable) {
        int status = response.getStatus();
        if (status < 400 || response.getContentWritten() > 0 || !response.setErrorReported()) {
            return;
        }
        // A 400 here is a request Tomcat could not parse (request line, path or headers).
        ProblemDetail problem = status == 400
                ? Problems.malformedRequest("the request line, path or headers could not be parsed")
                : Problems.typed(ProblemDetail.forStatus(status));
        try {
            response.setContentType(MediaType.APPLICATION_PROBLEM_JSON_VALUE);
            response.setCharacterEncoding(StandardCharsets.UTF_8.name());
            Writer writer = response.getReporter();
            if (writer != null) {
                // Written by hand: no JSON mapper here, and every field is our own text without quotes.
                writer.write("{\"type\":\"" + problem.getType() + "\",\"title\":\"" + problem.getTitle()
                        + "\",\"status\":" + status
                        + (problem.getDetail() == null ? "" : ",\"detail\":\"" + problem.getDetail() + "\"") + "}");
                response.finishResponse();
            }
        } catch (IOException | IllegalStateException ignored) {
            // the client went away, or the response cannot be written any more: nothing to report to
        }
    }
}
