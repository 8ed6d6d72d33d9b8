/*
 * Anchor for benchmark row 6: the fastest plain way to receive small framed messages. Listens
 * on PORT, accepts one connection, reads 256 KiB at a time and walks the 8-byte frame headers
 * (docs/PROTOCOL.md), counting TEXT frames; prints the time from the first to the COUNTth as
 * JSON like svc-bench sink, then closes.
 *
 * usage: frame-sink PORT COUNT
 */
#include <arpa/inet.h>
#include <netinet/in.h>
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

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: frame-sink PORT COUNT\n"); return 64; }
    long count = atol(argv[2]);
    int listener = socket(AF_INET, SOCK_STREAM, 0), yes = 1;
    setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[1]))};
    if (bind(listener, (struct sockaddr *)&address, sizeof address) < 0 || listen(listener, 1) < 0) { perror("listen"); return 71; }
    printf("{\"phase\":\"listening\",\"port\":%s}\n", argv[1]);
    fflush(stdout);
    int fd = accept(listener, NULL, NULL);
    if (fd < 0) { perror("accept"); return 71; }

    enum { chunk = 256 << 10 };
    static unsigned char buffer[chunk + 8 + 65536];
    size_t held = 0;
    long received = 0;
    uint64_t first = 0, last = 0;
    while (received < count) {
        ssize_t got = read(fd, buffer + held, chunk);
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
    close(fd);
    return received == count ? 0 : 1;
}
