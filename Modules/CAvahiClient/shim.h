// avahi-daemon's own client library (Debian: libavahi-client-dev), used by DNSSD only for what
// Avahi's dns_sd compatibility layer drops: a browser's "all for now" signal, and why a
// connection to the daemon fails (its kDNSServiceErr_Unknown covers every reason). No pkgConfig in
// Package.swift, for the reason CDNSSD gives (`pkg-config --cflags avahi-client` is -D_REENTRANT
// only); the module map links what its Libs say.
#if __has_include(<avahi-client/lookup.h>)
#include <avahi-client/client.h>
#include <avahi-client/lookup.h>
#include <avahi-common/error.h>
#include <avahi-common/simple-watch.h>
#include <avahi-common/thread-watch.h>
#else
#error "avahi-client/lookup.h is missing: install libavahi-client-dev (Scripts/install-deps does)"
#endif
