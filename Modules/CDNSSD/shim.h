// Avahi's Bonjour compatibility layer (Debian: libavahi-compat-libdns_sd-dev), by its path under
// the default include directory: Package.swift gives no pkgConfig for this module, because
// `pkg-config --cflags avahi-compat-libdns_sd` adds -D_REENTRANT, which SwiftPM refuses with a
// warning on every build (and which glibc ignores); the module map links libdns_sd.
#if __has_include(<avahi-compat-libdns_sd/dns_sd.h>)
#include <avahi-compat-libdns_sd/dns_sd.h>
#else
#error "dns_sd.h of Avahi is missing: install libavahi-compat-libdnssd-dev (Scripts/install-deps does)"
#endif
