/**
 * How the API's responses leave the process: JSON bodies with their length (one socket write for a
 * small answer, no chunked encoding).
 */
package dev.herald.dispatcher.http;
