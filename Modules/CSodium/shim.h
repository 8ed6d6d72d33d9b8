// libsodium (Debian libsodium-dev 1.0.18), for CPace over ristretto255 with SHA-512; only
// RoomCodeExchange imports it.
#include <sodium.h>
