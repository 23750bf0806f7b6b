/**
 * Who may call what. Controllers are marked {@link dev.herald.dispatcher.auth.AdminApi} or
 * {@link dev.herald.dispatcher.auth.AppApi}; {@link dev.herald.dispatcher.auth.AuthInterceptor}
 * checks the bearer token before any argument is read, and refuses handlers marked neither.
 */
package dev.herald.dispatcher.auth;
