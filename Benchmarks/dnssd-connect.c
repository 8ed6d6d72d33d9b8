/*
 * Anchor for benchmark row 2: what a C developer writes with dns_sd.h to reach a service by
 * name: Browse for the type until the instance appears, Resolve it, QueryRecord its A record,
 * connect, send the first byte of a frame (since protocol version 2 a server says nothing before
 * the client's first byte, which picks TLS or, with --allow-plaintext, version 1), and wait for
 * the server's first bytes. Exits 0 once they arrived.
 *
 * usage: dnssd-connect NAME [TYPE]
 */
#include <arpa/inet.h>
#include <dns_sd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <unistd.h>

static const char *wanted;
static const char *type = "_p2pipp._tcp";
static DNSServiceRef browse_ref, resolve_ref, query_ref;
static uint16_t port;
static uint32_t interface_index;
static int done;

static void query_reply(DNSServiceRef ref, DNSServiceFlags flags, uint32_t ifi, DNSServiceErrorType err,
                        const char *name, uint16_t rrtype, uint16_t rrclass, uint16_t rdlen, const void *rdata,
                        uint32_t ttl, void *context) {
    (void)ref; (void)ifi; (void)name; (void)rrclass; (void)ttl; (void)context;
    if (err || !(flags & kDNSServiceFlagsAdd) || rrtype != kDNSServiceType_A || rdlen != 4) return;
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = port};
    memcpy(&address.sin_addr, rdata, 4);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&address, sizeof address) != 0) { perror("connect"); exit(1); }
    char byte = 0; /* a version 1 frame's length starts with 0 */
    if (write(fd, &byte, 1) != 1) { perror("write"); exit(1); }
    if (read(fd, &byte, 1) != 1) { fprintf(stderr, "no greeting\n"); exit(1); }
    close(fd);
    done = 1;
}

static void resolve_reply(DNSServiceRef ref, DNSServiceFlags flags, uint32_t ifi, DNSServiceErrorType err,
                          const char *fullname, const char *host, uint16_t p, uint16_t txtlen, const unsigned char *txt,
                          void *context) {
    (void)ref; (void)flags; (void)fullname; (void)txtlen; (void)txt; (void)context;
    if (err || query_ref) return;
    port = p;
    if (DNSServiceQueryRecord(&query_ref, 0, ifi, host, kDNSServiceType_A, kDNSServiceClass_IN, query_reply, NULL)) exit(1);
}

static void browse_reply(DNSServiceRef ref, DNSServiceFlags flags, uint32_t ifi, DNSServiceErrorType err,
                         const char *name, const char *regtype, const char *domain, void *context) {
    (void)ref; (void)regtype; (void)context;
    if (err || !(flags & kDNSServiceFlagsAdd) || strcmp(name, wanted) != 0 || resolve_ref) return;
    interface_index = ifi;
    if (DNSServiceResolve(&resolve_ref, 0, ifi, name, type, domain, resolve_reply, NULL)) exit(1);
}

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: dnssd-connect NAME [TYPE]\n"); return 64; }
    wanted = argv[1];
    if (argc > 2) type = argv[2];
    if (DNSServiceBrowse(&browse_ref, 0, 0, type, "local.", browse_reply, NULL)) { fprintf(stderr, "browse failed\n"); return 69; }
    while (!done) {
        DNSServiceRef refs[] = {browse_ref, resolve_ref, query_ref};
        fd_set readable;
        FD_ZERO(&readable);
        int highest = -1;
        for (int i = 0; i < 3; i++) if (refs[i]) { int fd = DNSServiceRefSockFD(refs[i]); FD_SET(fd, &readable); if (fd > highest) highest = fd; }
        struct timeval timeout = {10, 0};
        if (select(highest + 1, &readable, NULL, NULL, &timeout) <= 0) { fprintf(stderr, "timed out\n"); return 75; }
        for (int i = 0; i < 3 && !done; i++)
            if (refs[i] && FD_ISSET(DNSServiceRefSockFD(refs[i]), &readable)) DNSServiceProcessResult(refs[i]);
    }
    return 0;
}
