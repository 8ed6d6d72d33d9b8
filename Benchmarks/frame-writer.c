/*
 * Anchor for benchmark row 6: the fastest plain way to send small framed messages. Connects,
 * sends a HELLO frame, then COUNT TEXT frames of PAYLOAD bytes (8-byte header each, as in
 * docs/PROTOCOL.md), packed into 256 KiB writes. Exits 0 once everything was written and the
 * receiver closed.
 *
 * With --tls: the same inside TLS 1.3 with OpenSSL, as protocol version 2 has it (ALPN p2pm/2,
 * CERT and KEY presented, any server key accepted), each 256 KiB batch one SSL_write (OpenSSL
 * cuts it into 16 KiB records): the anchor of row 6's encrypted rows.
 *
 * usage: frame-writer [--tls CERT KEY] IPV4 PORT COUNT [PAYLOAD]
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
#include <unistd.h>

static size_t put_header(unsigned char *out, uint32_t length, uint16_t type) {
    uint32_t big_length = htonl(length);
    uint16_t big_type = htons(type), flags = 0;
    memcpy(out, &big_length, 4);
    memcpy(out + 4, &big_type, 2);
    memcpy(out + 6, &flags, 2);
    return 8;
}

static SSL *ssl;

static int write_all(int fd, const unsigned char *data, size_t count) {
    if (ssl) {
        size_t written = 0;
        if (SSL_write_ex(ssl, data, count, &written) != 1 || written != count) {
            ERR_print_errors_fp(stderr);
            return -1;
        }
        return 0;
    }
    while (count > 0) {
        ssize_t written = write(fd, data, count);
        if (written < 0) { perror("write"); return -1; }
        data += written;
        count -= (size_t)written;
    }
    return 0;
}

int main(int argc, char **argv) {
    const char *certificate = NULL, *key = NULL;
    if (argc >= 4 && strcmp(argv[1], "--tls") == 0) {
        certificate = argv[2];
        key = argv[3];
        argv += 3;
        argc -= 3;
    }
    if (argc < 4) { fprintf(stderr, "usage: frame-writer [--tls CERT KEY] IPV4 PORT COUNT [PAYLOAD]\n"); return 64; }
    long count = atol(argv[3]);
    size_t payload = argc > 4 ? (size_t)atol(argv[4]) : 64;
    if (payload < 4 || payload > 65536) { fprintf(stderr, "frame-writer: PAYLOAD must be 4 to 65536\n"); return 64; }
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[2]))};
    if (inet_pton(AF_INET, argv[1], &address.sin_addr) != 1) { fprintf(stderr, "frame-writer: bad address\n"); return 64; }
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&address, sizeof address) < 0) { perror("connect"); return 69; }
    SSL_CTX *context = NULL;
    if (certificate) {
        static const unsigned char protocols[] = {6, 'p', '2', 'p', 'm', '/', '2'};
        context = SSL_CTX_new(TLS_client_method());
        if (!context || !SSL_CTX_set_min_proto_version(context, TLS1_3_VERSION) ||
            SSL_CTX_use_certificate_file(context, certificate, SSL_FILETYPE_PEM) != 1 ||
            SSL_CTX_use_PrivateKey_file(context, key, SSL_FILETYPE_PEM) != 1 ||
            SSL_CTX_set_alpn_protos(context, protocols, sizeof protocols) != 0) {
            ERR_print_errors_fp(stderr);
            return 78;
        }
        SSL_CTX_set_verify(context, SSL_VERIFY_NONE, NULL);
        ssl = SSL_new(context);
        if (!ssl || !SSL_set_fd(ssl, fd) || SSL_connect(ssl) != 1) {
            fprintf(stderr, "frame-writer: TLS handshake failed\n");
            ERR_print_errors_fp(stderr);
            return 69;
        }
    }

    enum { batch = 256 << 10 };
    static unsigned char buffer[batch + 65536 + 64];
    /* HELLO: magic, version 1, capabilities 7, name "cbench" */
    static const unsigned char hello[] = {'P', '2', 'P', 'M', 0, 1, 0, 0, 0, 7, 0, 6, 'c', 'b', 'e', 'n', 'c', 'h'};
    size_t used = put_header(buffer, sizeof hello, 0x0001);
    memcpy(buffer + used, hello, sizeof hello);
    used += sizeof hello;
    /* TEXT: from "" (u16 0), to "" (u16 0), then the text */
    unsigned char frame[8 + 65536];
    size_t frame_size = put_header(frame, (uint32_t)payload, 0x0010);
    memset(frame + frame_size, 0, 4);
    memset(frame + frame_size + 4, 'x', payload - 4);
    frame_size += payload;
    for (long sent = 0; sent < count; sent++) {
        memcpy(buffer + used, frame, frame_size);
        used += frame_size;
        if (used >= batch) {
            if (write_all(fd, buffer, used) < 0) return 74;
            used = 0;
        }
    }
    if (used > 0 && write_all(fd, buffer, used) < 0) return 74;
    if (ssl) {
        size_t got;
        SSL_shutdown(ssl); /* close_notify: the TLS way to say nothing more comes */
        while (SSL_read_ex(ssl, buffer, sizeof buffer, &got) == 1) {}
        SSL_free(ssl);
        SSL_CTX_free(context);
    } else {
        shutdown(fd, SHUT_WR);
        while (read(fd, buffer, sizeof buffer) > 0) {}
    }
    close(fd);
    return 0;
}
