package dev.herald.dispatcher.auth;

import dev.herald.dispatcher.DispatcherProperties;
import dev.herald.store.app.ApiKeyIndex;
import dev.herald.store.app.AppCache;
import java.util.List;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.MethodParameter;
import org.springframework.web.bind.support.WebDataBinderFactory;
import org.springframework.web.context.request.NativeWebRequest;
import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.method.support.HandlerMethodArgumentResolver;
import org.springframework.web.method.support.ModelAndViewContainer;
import org.springframework.web.servlet.config.annotation.InterceptorRegistry;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

/** Installs the authentication of {@code /v1} and hands the authenticated app (or admin caller) to handlers. */
@Configuration(proxyBeanMethods = false)
public class AuthConfiguration implements WebMvcConfigurer {
    private final AuthInterceptor interceptor;

    AuthConfiguration(DispatcherProperties properties, AppCache apps, ApiKeyIndex keyIndex) {
        this.interceptor = new AuthInterceptor(new AdminToken(properties.adminToken()), apps, keyIndex);
    }

    @Override
    public void addInterceptors(InterceptorRegistry registry) {
        registry.addInterceptor(interceptor).addPathPatterns("/v1/**");
    }

    @Override
    public void addArgumentResolvers(List<HandlerMethodArgumentResolver> resolvers) {
        resolvers.add(new HandlerMethodArgumentResolver() {
            @Override
            public boolean supportsParameter(MethodParameter parameter) {
                return parameter.getParameterType() == AuthenticatedApp.class || parameter.getParameterType() == AdminCaller.class;
            }

            @Override
            public Object resolveArgument(MethodParameter parameter, ModelAndViewContainer mav, NativeWebRequest request,
                                          WebDataBinderFactory binders) {
                boolean admin = parameter.getParameterType() == AdminCaller.class;
                Object caller = request.getAttribute(admin ? AdminCaller.ATTRIBUTE : AuthenticatedApp.ATTRIBUTE,
                        RequestAttributes.SCOPE_REQUEST);
                if (caller == null) {
                    throw new IllegalStateException("no authenticated caller: is the controller marked "
                            + (admin ? "@AdminApi?" : "@AppApi?"));
                }
                return caller;
            }
        });
    }
}
