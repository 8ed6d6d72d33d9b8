// NLnet Labs' ldns (Debian libldns-dev): DNS UPDATE packets, TSIG signing and verification,
// queries with EDNS0 and TCP fallback. Only UnicastDNSSD imports it.
// <stdbool.h> must come first: without it ldns's `bool` reaches Swift as Int8.
#include <stdbool.h>
#include <ldns/ldns.h>
