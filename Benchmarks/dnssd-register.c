/*
 * Anchor for benchmark row 8: one C process registering COUNT services with dns_sd.h, each its
 * own DNSServiceRef, serviced with select(). Prints a JSON line when the daemon has confirmed
 * all of them, then keeps them until SIGTERM or SIGINT.
 *
 * usage: dnssd-register COUNT PREFIX [TYPE]
 */
#include <arpa/inet.h>
#include <dns_sd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stopping;
static int confirmed, failed;

static void on_signal(int number) { (void)number; stopping = 1; }

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void registered(DNSServiceRef ref, DNSServiceFlags flags, DNSServiceErrorType err, const char *name,
                       const char *type, const char *domain, void *context) {
    (void)ref; (void)flags; (void)name; (void)type; (void)domain; (void)context;
    if (err == kDNSServiceErr_NoError) confirmed++; else failed++;
}

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: dnssd-register COUNT PREFIX [TYPE]\n"); return 64; }
    int count = atoi(argv[1]);
    const char *type = argc > 3 ? argv[3] : "_p2pipp._tcp";
    if (count < 1 || count > FD_SETSIZE - 16) { fprintf(stderr, "dnssd-register: COUNT must be 1 to %d\n", FD_SETSIZE - 16); return 64; }
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    DNSServiceRef *refs = calloc((size_t)count, sizeof *refs);
    double start = now();
    for (int i = 0; i < count; i++) {
        char name[64];
        snprintf(name, sizeof name, "%s-%d", argv[2], i);
        DNSServiceErrorType err = DNSServiceRegister(&refs[i], 0, 0, name, type, NULL, NULL, htons((uint16_t)(4242 + i % 1000)), 0,
                                                     NULL, registered, NULL);
        if (err) { fprintf(stderr, "dnssd-register: DNSServiceRegister failed: %d\n", err); return 69; }
    }
    int reported = 0;
    while (!stopping) {
        fd_set readable;
        FD_ZERO(&readable);
        int highest = 0;
        for (int i = 0; i < count; i++) {
            int fd = DNSServiceRefSockFD(refs[i]);
            FD_SET(fd, &readable);
            if (fd > highest) highest = fd;
        }
        struct timeval wait = {.tv_sec = 1};
        if (select(highest + 1, &readable, NULL, NULL, &wait) < 0) continue;
        for (int i = 0; i < count; i++) {
            if (FD_ISSET(DNSServiceRefSockFD(refs[i]), &readable)) DNSServiceProcessResult(refs[i]);
        }
        if (!reported && confirmed + failed == count) {
            printf("{\"phase\":\"registered\",\"services\":%d,\"failed\":%d,\"milliseconds\":%d}\n", confirmed, failed,
                   (int)((now() - start) * 1000));
            fflush(stdout);
            reported = 1;
        }
    }
    for (int i = 0; i < count; i++) DNSServiceRefDeallocate(refs[i]);
    return failed ? 1 : 0;
}
