/**
 * The API's JSON answers (each sent whole, with its length) and its errors as RFC 9457
 * {@code application/problem+json}, for every path a request can take: the
 * controllers' own problems, Spring MVC's (405, 415, malformed JSON...), bodies over the size limit
 * and errors raised by the servlet container. A problem never echoes a submitted value.
 */
package dev.herald.dispatcher.problem;
