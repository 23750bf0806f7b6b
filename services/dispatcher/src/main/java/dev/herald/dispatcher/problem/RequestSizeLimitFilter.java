package dev.herald.dispatcher.problem;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.web.filter.OncePerRequestFilter;
import tools.jackson.databind.json.JsonMapper;

/**
 * Refuses request bodies over the limit with 413 before anything parses them: at once when
 * {@code Content-Length} says so, and while reading for chunked bodies (the parser then fails with
 * {@link TooLargeException}, which {@link ProblemHandler} turns into the same 413).
 */
public final class RequestSizeLimitFilter extends OncePerRequestFilter {
    private final long limit;
    private final JsonMapper json;

    public RequestSizeLimitFilter(long limit, JsonMapper json) {
        this.limit = limit;
        this.json = json;
    }

    /** The body grew past the limit while it was being read. */
    static final class TooLargeException extends IOException {
        TooLargeException(String message) {
            super(message);
        }
    }

    /**
     * Bodies read as a stream, each line limited by its reader (the bulk device import): any length
     * is fine, as only one line at a time is held.
     */
    static final String STREAMED_PATH_SUFFIX = "/device-imports";

    @Override
    protected boolean shouldNotFilter(HttpServletRequest request) {
        return request.getRequestURI().endsWith(STREAMED_PATH_SUFFIX);
    }

    private String message() {
        return "the request body is larger than " + limit + " bytes";
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        if (request.getContentLengthLong() > limit) {
            ProblemDetail problem = Problems.tooLarge(message()).getBody();
            problem.setInstance(java.net.URI.create(request.getRequestURI()));
            response.setStatus(problem.getStatus());
            response.setContentType(MediaType.APPLICATION_PROBLEM_JSON_VALUE);
            // The body is not read; tell the client the connection will not be reused for it.
            response.setHeader("Connection", "close");
            json.writeValue(response.getOutputStream(), problem);
            return;
        }
        chain.doFilter(request.getContentLengthLong() < 0 ? new Limited(request) : request, response);
    }

    private final class Limited extends HttpServletRequestWrapper {
        private ServletInputStream stream;

        Limited(HttpServletRequest request) {
            super(request);
        }

        @Override
        public ServletInputStream getInputStream() throws IOException {
            if (stream == null) {
                stream = new CountingStream(super.getInputStream());
            }
            return stream;
        }

        @Override
        public java.io.BufferedReader getReader() throws IOException {
            String encoding = getCharacterEncoding() == null ? "UTF-8" : getCharacterEncoding();
            return new java.io.BufferedReader(new java.io.InputStreamReader(getInputStream(), encoding));
        }
    }

    private final class CountingStream extends ServletInputStream {
        private final ServletInputStream in;
        private long count;

        CountingStream(ServletInputStream in) {
            this.in = in;
        }

        private int counted(int n) throws TooLargeException {
            if (n > 0) {
                count += n;
                if (count > limit) {
                    throw new TooLargeException(message());
                }
            }
            return n;
        }

        @Override
        public int read() throws IOException {
            int b = in.read();
            if (b >= 0) {
                counted(1);
            }
            return b;
        }

        @Override
        public int read(byte[] buffer, int offset, int length) throws IOException {
            return counted(in.read(buffer, offset, length));
        }

        @Override
        public boolean isFinished() {
            return in.isFinished();
        }

        @Override
        public boolean isReady() {
            return in.isReady();
        }

        @Override
        public void setReadListener(ReadListener listener) {
            in.setReadListener(listener);
        }
    }
}
