/*
 * Anchor for benchmark row 6: the fastest plain way to receive small framed messages. Listens
 * on PORT, accepts one connection, reads 256 KiB at a time and walks the 8-byte frame headers
 * (docs/PROTOCOL.md), counting TEXT frames; prints the time from the first to the COUNTth as
 * JSON like svc-bench sink, then closes.
 *
 * With --tls: the same inside TLS 1.3 with OpenSSL, as protocol version 2 has it (ALPN p2pm/2,
 * CERT and KEY presented, the client's certificate asked for and any accepted): the anchor of
 * row 6's encrypted rows. Each SSL_read returns at most one record; the loop reads until the
 * 256 KiB buffer is full or nothing more is buffered in OpenSSL.
 *
 * usage: frame-sink [--tls CERT KEY] PORT COUNT
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static const unsigned char protocol[] = {'p', '2', 'p', 'm', '/', '2'};

static int select_protocol(SSL *ssl, const unsigned char **out, unsigned char *out_length, const unsigned char *in,
                           unsigned int in_length, void *arg) {
    (void)ssl;
    (void)arg;
    for (unsigned int at = 0; at < in_length; at += 1u + in[at]) {
        if (in[at] == sizeof protocol && at + 1u + in[at] <= in_length && memcmp(in + at + 1, protocol, sizeof protocol) == 0) {
            *out = in + at + 1;
            *out_length = in[at];
            return SSL_TLSEXT_ERR_OK;
        }
    }
    return SSL_TLSEXT_ERR_ALERT_FATAL;
}

static int accept_any(int ok, X509_STORE_CTX *store) {
    (void)ok;
    (void)store;
    return 1;
}

int main(int argc, char **argv) {
    const char *certificate = NULL, *key = NULL;
    if (argc >= 4 && strcmp(argv[1], "--tls") == 0) {
        certificate = argv[2];
        key = argv[3];
        argv += 3;
        argc -= 3;
    }
    if (argc < 3) { fprintf(stderr, "usage: frame-sink [--tls CERT KEY] PORT COUNT\n"); return 64; }
    SSL_CTX *context = NULL;
    if (certificate) {
        context = SSL_CTX_new(TLS_server_method());
        if (!context || !SSL_CTX_set_min_proto_version(context, TLS1_3_VERSION) ||
            SSL_CTX_use_certificate_file(context, certificate, SSL_FILETYPE_PEM) != 1 ||
            SSL_CTX_use_PrivateKey_file(context, key, SSL_FILETYPE_PEM) != 1) {
            ERR_print_errors_fp(stderr);
            return 78;
        }
        SSL_CTX_set_num_tickets(context, 0);
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, accept_any);
        SSL_CTX_set_alpn_select_cb(context, select_protocol, NULL);
    }
    long count = atol(argv[2]);
    int listener = socket(AF_INET, SOCK_STREAM, 0), yes = 1;
    setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[1]))};
    if (bind(listener, (struct sockaddr *)&address, sizeof address) < 0 || listen(listener, 1) < 0) { perror("listen"); return 71; }
    printf("{\"phase\":\"listening\",\"port\":%s}\n", argv[1]);
    fflush(stdout);
    int fd = accept(listener, NULL, NULL);
    if (fd < 0) { perror("accept"); return 71; }
    SSL *ssl = NULL;
    if (context) {
        ssl = SSL_new(context);
        if (!ssl || !SSL_set_fd(ssl, fd) || SSL_accept(ssl) != 1) {
            fprintf(stderr, "frame-sink: TLS handshake failed\n");
            ERR_print_errors_fp(stderr);
            return 71;
        }
    }

    enum { chunk = 256 << 10 };
    static unsigned char buffer[chunk + 8 + 65536];
    size_t held = 0;
    long received = 0;
    uint64_t first = 0, last = 0;
    while (received < count) {
        ssize_t got;
        if (ssl) {
            size_t taken = 0, read_now = 0;
            /* One record a call: gather what OpenSSL holds or the socket has, up to the chunk. */
            while (taken < chunk && SSL_read_ex(ssl, buffer + held + taken, chunk - taken, &read_now) == 1) {
                taken += read_now;
                if (SSL_pending(ssl) == 0 && !SSL_has_pending(ssl)) break;
            }
            got = (ssize_t)taken;
        } else {
            got = read(fd, buffer + held, chunk);
        }
        if (got <= 0) break;
        held += (size_t)got;
        size_t at = 0;
        while (held - at >= 8) {
            uint32_t length;
            uint16_t type;
            memcpy(&length, buffer + at, 4);
            memcpy(&type, buffer + at + 4, 2);
            length = ntohl(length);
            if (length > 65536) { fprintf(stderr, "frame-sink: frame of %u bytes\n", length); return 65; }
            if (held - at < 8 + length) break;
            if (ntohs(type) == 0x0010) {
                if (received == 0) first = now_ns();
                if (++received == count) last = now_ns();
            }
            at += 8 + length;
        }
        memmove(buffer, buffer + at, held - at);
        held -= at;
    }
    double seconds = (double)(last - first) / 1e9;
    printf("{\"phase\":\"sink\",\"messages\":%ld,\"microseconds\":%ld,\"messages_per_second\":%ld}\n", received,
           (long)(seconds * 1e6), seconds > 0 ? (long)((double)(received - 1) / seconds) : 0L);
    if (ssl) {
        SSL_shutdown(ssl);
        SSL_free(ssl);
        SSL_CTX_free(context);
    }
    close(fd);
    return received == count ? 0 : 1;
}
