// Avahi's Bonjour compatibility layer. pkg-config avahi-compat-libdns_sd adds its include path.
#include <dns_sd.h>
