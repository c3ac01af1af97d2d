#ifndef HERALD_CCURL_TLS_WRITE_BATCH_H
#define HERALD_CCURL_TLS_WRITE_BATCH_H
// Batched TLS writes for HeraldHTTP's driver (TLSWriteBatch.swift), included by shim.h.
//
// libcurl 7.88 has nghttp2 hand each HTTP/2 frame to OpenSSL on its own, and OpenSSL writes each
// record to the socket at once: a request's HEADERS and DATA, and every WINDOW_UPDATE, are a
// send(2) each (about 2.5 per push, ~15 % of the client's CPU against the sandbox). A
// `herald_tls_buffer` is a write-only OpenSSL filter BIO put between a connection's SSL object
// and libcurl's own BIO once the handshake is done: records collect in it while the driver's
// pass runs and leave in one send(2) when the driver flushes before it polls.
//
// Writes go straight to the connection's socket (found by its local port among the sockets the
// client opened), bypassing libcurl's BIO, which needs the transfer libcurl is serving at the
// time: so a buffer is only installed where the TLS session runs directly on that socket (no
// HTTPS proxy in between). Everything here runs on the driver thread, as every libcurl call does.
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/ssl.h>

// Above this many bytes held, a write sends what is held first (a large body is not held whole).
#define HERALD_TLS_BUFFER_LIMIT (256 * 1024)

struct herald_tls_buffers;

typedef struct herald_tls_buffer {
    struct herald_tls_buffer *previous, *next;
    struct herald_tls_buffers *owner;
    int fd;
    // A send failed for good (the connection is gone): later writes fail, as libcurl's would.
    int failed;
    unsigned char *bytes;
    size_t start, length, capacity;
} herald_tls_buffer;

// One HTTP client's buffers (one per TLS connection), flushed together.
typedef struct herald_tls_buffers {
    herald_tls_buffer *head;
    // The client's open sockets (CURLOPT_SOCKOPTFUNCTION adds, CURLOPT_CLOSESOCKETFUNCTION
    // removes): where a connection's local port is looked up to find its socket.
    curl_socket_t *sockets;
    size_t socketCount, socketCapacity;
    // send(2) calls that carried held bytes: what batching saved is requests × 2.5 − this.
    long sends;
    long installed;
} herald_tls_buffers;

static inline long herald_tls_buffer_send(herald_tls_buffer *buffer) {
    while (buffer->length > 0 && !buffer->failed) {
        ssize_t sent = send(buffer->fd, buffer->bytes + buffer->start, buffer->length, MSG_NOSIGNAL);
        if (sent > 0) {
            buffer->start += (size_t)sent;
            buffer->length -= (size_t)sent;
            if (buffer->owner) buffer->owner->sends += 1;
        } else if (sent < 0 && errno == EINTR) {
            continue;
        } else if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            return 0;
        } else {
            // The peer is gone: drop what is held; libcurl learns it from its next read.
            buffer->failed = 1;
            buffer->length = 0;
            return -1;
        }
    }
    if (buffer->length == 0) buffer->start = 0;
    return buffer->failed ? -1 : 1;
}

static inline int herald_tls_buffer_write(BIO *bio, const char *data, int size) {
    herald_tls_buffer *buffer = (herald_tls_buffer *)BIO_get_data(bio);
    BIO_clear_retry_flags(bio);
    if (size <= 0) return 0;
    if (buffer == NULL || buffer->failed) return -1;
    size_t needed = buffer->length + (size_t)size;
    if (needed > HERALD_TLS_BUFFER_LIMIT) {
        if (herald_tls_buffer_send(buffer) < 0) return -1;
        if (buffer->length > 0) {
            BIO_set_retry_write(bio);  // the socket is full: OpenSSL retries this write later
            return -1;
        }
        needed = (size_t)size;
    }
    if (buffer->start + needed > buffer->capacity) {
        if (buffer->start > 0) {
            memmove(buffer->bytes, buffer->bytes + buffer->start, buffer->length);
            buffer->start = 0;
        }
        if (needed > buffer->capacity) {
            size_t capacity = buffer->capacity ? buffer->capacity : 16384;
            while (capacity < needed) capacity *= 2;
            unsigned char *bytes = (unsigned char *)realloc(buffer->bytes, capacity);
            if (bytes == NULL) return -1;
            buffer->bytes = bytes;
            buffer->capacity = capacity;
        }
    }
    memcpy(buffer->bytes + buffer->start + buffer->length, data, (size_t)size);
    buffer->length += (size_t)size;
    return size;
}

static inline long herald_tls_buffer_ctrl(BIO *bio, int command, long number, void *pointer) {
    herald_tls_buffer *buffer = (herald_tls_buffer *)BIO_get_data(bio);
    BIO *next = BIO_next(bio);
    switch (command) {
    case BIO_CTRL_FLUSH:
        BIO_clear_retry_flags(bio);
        if (buffer != NULL && buffer->length > 0) {
            if (herald_tls_buffer_send(buffer) < 0) return 0;
            if (buffer->length > 0) {
                BIO_set_retry_write(bio);
                return 0;
            }
        }
        return next != NULL ? BIO_ctrl(next, command, number, pointer) : 1;
    case BIO_CTRL_WPENDING:
        return (long)(buffer != NULL ? buffer->length : 0) + (next != NULL ? BIO_ctrl(next, command, number, pointer) : 0);
    case BIO_CTRL_DUP:
        return 0;
    default:
        return next != NULL ? BIO_ctrl(next, command, number, pointer) : 0;
    }
}

static inline int herald_tls_buffer_create(BIO *bio) {
    BIO_set_init(bio, 1);
    return 1;
}

static inline void herald_tls_buffer_unlink(herald_tls_buffer *buffer) {
    if (buffer->owner == NULL) return;
    if (buffer->previous != NULL) buffer->previous->next = buffer->next;
    else buffer->owner->head = buffer->next;
    if (buffer->next != NULL) buffer->next->previous = buffer->previous;
    buffer->owner = NULL;
    buffer->previous = buffer->next = NULL;
}

// Called when OpenSSL frees the connection's SSL object (libcurl closed the connection): what is
// still held is dropped with it.
static inline int herald_tls_buffer_destroy(BIO *bio) {
    herald_tls_buffer *buffer = (herald_tls_buffer *)BIO_get_data(bio);
    if (buffer != NULL) {
        herald_tls_buffer_unlink(buffer);
        free(buffer->bytes);
        free(buffer);
        BIO_set_data(bio, NULL);
    }
    BIO_set_init(bio, 0);
    return 1;
}

// The method and its type live in function-local statics: Swift's importer emits the inline
// functions it calls, but not a header's file-scope variables.
static inline BIO_METHOD **herald_tls_buffer_method_slot(void) {
    static BIO_METHOD *method = NULL;
    return &method;
}

static inline int *herald_tls_buffer_type_slot(void) {
    static int type = -1;
    return &type;
}

static inline void herald_tls_buffer_make_method(void) {
    int type = BIO_get_new_index();
    if (type == -1) return;
    BIO_METHOD *method = BIO_meth_new(type | BIO_TYPE_FILTER, "herald write batch");
    if (method == NULL) return;
    if (!BIO_meth_set_write(method, herald_tls_buffer_write) || !BIO_meth_set_ctrl(method, herald_tls_buffer_ctrl)
        || !BIO_meth_set_create(method, herald_tls_buffer_create) || !BIO_meth_set_destroy(method, herald_tls_buffer_destroy)) {
        BIO_meth_free(method);
        return;
    }
    *herald_tls_buffer_type_slot() = type | BIO_TYPE_FILTER;
    *herald_tls_buffer_method_slot() = method;
}

static inline BIO_METHOD *herald_tls_buffer_method(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, herald_tls_buffer_make_method);
    return *herald_tls_buffer_method_slot();
}

// The OpenSSL this process runs ("3.0.17"): batching needs libcurl's to be the same one.
static inline const char *herald_openssl_version(void) {
    return OpenSSL_version(OPENSSL_VERSION_STRING);
}

static inline herald_tls_buffers *herald_tls_buffers_new(void) {
    return (herald_tls_buffers *)calloc(1, sizeof(herald_tls_buffers));
}

// After curl_multi_cleanup (every SSL object freed): forgets buffers that are somehow left.
static inline void herald_tls_buffers_free(herald_tls_buffers *buffers) {
    while (buffers->head != NULL) herald_tls_buffer_unlink(buffers->head);
    free(buffers->sockets);
    free(buffers);
}

static inline int herald_tls_socket_opened(void *context, curl_socket_t fd, curlsocktype purpose) {
    (void)purpose;
    herald_tls_buffers *buffers = (herald_tls_buffers *)context;
    if (buffers->socketCount == buffers->socketCapacity) {
        size_t capacity = buffers->socketCapacity ? buffers->socketCapacity * 2 : 8;
        curl_socket_t *sockets = (curl_socket_t *)realloc(buffers->sockets, capacity * sizeof(curl_socket_t));
        if (sockets == NULL) return CURL_SOCKOPT_OK;  // this connection is not batched, that is all
        buffers->sockets = sockets;
        buffers->socketCapacity = capacity;
    }
    buffers->sockets[buffers->socketCount++] = fd;
    return CURL_SOCKOPT_OK;
}

// A socket libcurl closes: forgotten, and a buffer still bound to it never writes again (its
// number may be reused at once).
static inline int herald_tls_socket_closed(void *context, curl_socket_t fd) {
    herald_tls_buffers *buffers = (herald_tls_buffers *)context;
    for (size_t index = 0; index < buffers->socketCount; index++) {
        if (buffers->sockets[index] == fd) {
            buffers->sockets[index] = buffers->sockets[--buffers->socketCount];
            break;
        }
    }
    for (herald_tls_buffer *buffer = buffers->head; buffer != NULL; buffer = buffer->next) {
        if (buffer->fd == fd) {
            buffer->failed = 1;
            buffer->length = 0;
            buffer->fd = -1;
        }
    }
    return close(fd);
}

// Lets `buffers` see the sockets `easy` opens and closes (set once per easy handle).
static inline CURLcode herald_tls_buffers_attach(CURL *easy, herald_tls_buffers *buffers) {
    CURLcode code = curl_easy_setopt(easy, CURLOPT_SOCKOPTFUNCTION, herald_tls_socket_opened);
    if (code == CURLE_OK) code = curl_easy_setopt(easy, CURLOPT_SOCKOPTDATA, (void *)buffers);
    if (code == CURLE_OK) code = curl_easy_setopt(easy, CURLOPT_CLOSESOCKETFUNCTION, herald_tls_socket_closed);
    if (code == CURLE_OK) code = curl_easy_setopt(easy, CURLOPT_CLOSESOCKETDATA, (void *)buffers);
    return code;
}

// Puts a buffer on `ssl`'s write side, whose records go to `fd`. Returns 1 when installed, 0
// when the connection has one already, -1 when it cannot be done (the connection stays as it is).
static inline int herald_tls_buffer_install(herald_tls_buffers *buffers, void *ssl_pointer, int fd) {
    SSL *ssl = (SSL *)ssl_pointer;
    BIO_METHOD *method = herald_tls_buffer_method();
    if (method == NULL || ssl == NULL || fd < 0 || !SSL_is_init_finished(ssl)) return -1;
    BIO *current = SSL_get_wbio(ssl);
    if (current == NULL) return -1;
    for (BIO *each = current; each != NULL; each = BIO_next(each)) {
        if (BIO_method_type(each) == *herald_tls_buffer_type_slot()) return 0;
    }
    herald_tls_buffer *buffer = (herald_tls_buffer *)calloc(1, sizeof(herald_tls_buffer));
    if (buffer == NULL) return -1;
    BIO *bio = BIO_new(method);
    if (bio == NULL || !BIO_up_ref(current)) {
        if (bio != NULL) BIO_free(bio);
        free(buffer);
        return -1;
    }
    buffer->fd = fd;
    buffer->owner = buffers;
    buffer->next = buffers->head;
    if (buffers->head != NULL) buffers->head->previous = buffer;
    buffers->head = buffer;
    buffers->installed += 1;
    BIO_set_data(bio, buffer);
    BIO_push(bio, current);   // bio → current (the reference taken above)
    SSL_set0_wbio(ssl, bio);  // drops the SSL object's own reference to current
    return 1;
}

// From a transfer's header callback (its connection attached): when the transfer opened its
// connection and that connection runs TLS over OpenSSL, puts a buffer on it. Returns as
// herald_tls_buffer_install does (-1 too when there is nothing to do).
static inline int herald_tls_buffers_adopt(herald_tls_buffers *buffers, CURL *easy) {
    long connects = 0;
    if (curl_easy_getinfo(easy, CURLINFO_NUM_CONNECTS, &connects) != CURLE_OK || connects <= 0) return -1;
    struct curl_tlssessioninfo *session = NULL;
    long port = 0;
    if (curl_easy_getinfo(easy, CURLINFO_TLS_SSL_PTR, &session) != CURLE_OK || session == NULL
        || session->backend != CURLSSLBACKEND_OPENSSL || session->internals == NULL) return -1;
    if (curl_easy_getinfo(easy, CURLINFO_LOCAL_PORT, &port) != CURLE_OK || port <= 0) return -1;
    for (size_t index = 0; index < buffers->socketCount; index++) {
        struct sockaddr_storage address;
        socklen_t length = sizeof(address);
        if (getsockname(buffers->sockets[index], (struct sockaddr *)&address, &length) != 0) continue;
        long local = address.ss_family == AF_INET ? ntohs(((struct sockaddr_in *)&address)->sin_port)
            : address.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&address)->sin6_port) : -1;
        if (local == port) return herald_tls_buffer_install(buffers, session->internals, buffers->sockets[index]);
    }
    return -1;
}

// Sends what every buffer holds. Returns how many still hold bytes (their socket is full) and
// puts up to `capacity` of their sockets in `waiting`, to poll for POLLOUT.
static inline int herald_tls_buffers_flush(herald_tls_buffers *buffers, struct curl_waitfd *waiting, int capacity) {
    int pending = 0;
    for (herald_tls_buffer *buffer = buffers->head; buffer != NULL; buffer = buffer->next) {
        if (buffer->length == 0) continue;
        herald_tls_buffer_send(buffer);
        if (buffer->length == 0) continue;
        if (pending < capacity) {
            waiting[pending].fd = buffer->fd;
            waiting[pending].events = CURL_WAIT_POLLOUT;
            waiting[pending].revents = 0;
        }
        pending += 1;
    }
    return pending;
}
#endif
