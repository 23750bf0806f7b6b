package dev.herald.dispatcher.console;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.filter.OncePerRequestFilter;
import org.springframework.web.servlet.config.annotation.ViewControllerRegistry;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

/**
 * Serves the console's pages ({@code classpath:/static/console/}) at {@code /console/} with the
 * headers that keep them safe: a Content-Security-Policy that runs only the console's own scripts and
 * styles and lets them talk only to this origin, no framing, no MIME sniffing, no referrer (a page
 * address never carries a key anyway), and no caching of the page that names the current bundle.
 */
@Configuration(proxyBeanMethods = false)
public class ConsolePages implements WebMvcConfigurer {
    static final String PATH = "/console";
    static final String CONTENT_SECURITY_POLICY = "default-src 'none'; script-src 'self'; style-src 'self'; "
            + "img-src 'self' data:; font-src 'self'; connect-src 'self'; form-action 'none'; base-uri 'none'; "
            + "frame-ancestors 'none'";

    @Override
    public void addViewControllers(ViewControllerRegistry registry) {
        registry.addRedirectViewController(PATH, PATH + "/");
        registry.addViewController(PATH + "/").setViewName("forward:" + PATH + "/index.html");
    }

    @Bean
    FilterRegistrationBean<OncePerRequestFilter> consoleSecurityHeaders() {
        FilterRegistrationBean<OncePerRequestFilter> registration = new FilterRegistrationBean<>(new OncePerRequestFilter() {
            @Override
            protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
                    throws ServletException, IOException {
                response.setHeader("Content-Security-Policy", CONTENT_SECURITY_POLICY);
                response.setHeader("X-Content-Type-Options", "nosniff");
                response.setHeader("X-Frame-Options", "DENY");
                response.setHeader("Referrer-Policy", "no-referrer");
                response.setHeader("Cross-Origin-Opener-Policy", "same-origin");
                if (!request.getRequestURI().startsWith(PATH + "/assets/")) {
                    response.setHeader("Cache-Control", "no-store");
                }
                chain.doFilter(request, response);
            }
        });
        registration.addUrlPatterns(PATH, PATH + "/*");
        return registration;
    }
}
