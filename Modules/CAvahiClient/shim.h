// avahi-daemon's own client library (Debian: libavahi-client-dev), used by DNSSD for resolves
// and address lookups (Avahi's dns_sd compatibility layer crashes when the daemon goes away
// under those, and reports every failure as kDNSServiceErr_Unknown), for what that layer
// drops (a browser's "all for now" signal), and to ask why a connection to the daemon fails.
// No pkgConfig in Package.swift, for the reason CDNSSD gives (`pkg-config --cflags avahi-client`
// is -D_REENTRANT only); the module map links what its Libs say.
#if __has_include(<avahi-client/lookup.h>)
#include <avahi-client/client.h>
#include <avahi-client/lookup.h>
#include <avahi-common/defs.h>
#include <avahi-common/domain.h>
#include <avahi-common/error.h>
#include <avahi-common/simple-watch.h>
#include <avahi-common/strlst.h>
#include <avahi-common/thread-watch.h>
#else
#error "avahi-client/lookup.h is missing: install libavahi-client-dev (Scripts/install-deps does)"
#endif
