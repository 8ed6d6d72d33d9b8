// OpenSSL's libssl and libcrypto (Debian libssl-dev), for the TLS 1.3 stage; only
// SecureTransport imports it (and its tests, to stage clients svc would never be).
// The wrappers below stand in for macros Swift cannot call.
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ec.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/decoder.h>

static inline int cssl_ctx_set_min_proto_version(SSL_CTX *ctx, int version) {
    return (int)SSL_CTX_set_min_proto_version(ctx, version);
}

static inline int cssl_ctx_set_max_proto_version(SSL_CTX *ctx, int version) {
    return (int)SSL_CTX_set_max_proto_version(ctx, version);
}

static inline long cssl_ctx_set_mode(SSL_CTX *ctx, long mode) {
    return SSL_CTX_set_mode(ctx, mode);
}

static inline void cssl_ctx_disable_session_cache(SSL_CTX *ctx) {
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
}

static inline long cssl_ctx_set_max_cert_list(SSL_CTX *ctx, long bytes) {
    return SSL_CTX_set_max_cert_list(ctx, bytes);
}

static inline int cssl_set_app_data(SSL *ssl, void *data) {
    return SSL_set_app_data(ssl, data);
}

static inline void *cssl_get_app_data(const SSL *ssl) {
    return SSL_get_app_data(ssl);
}

static inline int cssl_ctx_set1_sigalgs_list(SSL_CTX *ctx, const char *list) {
    return (int)SSL_CTX_set1_sigalgs_list(ctx, list);
}

static inline long cssl_bio_pending(BIO *bio) {
    return (long)BIO_pending(bio);
}

static inline int cssl_err_get_reason(unsigned long error) {
    return ERR_GET_REASON(error);
}

static const uint64_t CSSL_OP_NO_TICKET = SSL_OP_NO_TICKET;
static const uint64_t CSSL_OP_NO_RENEGOTIATION = SSL_OP_NO_RENEGOTIATION;
static const long CSSL_MODE_RELEASE_BUFFERS = SSL_MODE_RELEASE_BUFFERS;
static const int CSSL_MBSTRING_ASC = MBSTRING_ASC;

// An EC private key in PKCS#8 PEM ("BEGIN PRIVATE KEY", the form svc writes), decoded by a
// decoder made for that form alone (OpenSSL's general PEM reader first sets up decoders for
// every kind and form of key); NULL when the bytes hold something else.
static inline EVP_PKEY *cssl_decode_ec_private_key_pem(const unsigned char *bytes, size_t length) {
    EVP_PKEY *key = NULL;
    OSSL_DECODER_CTX *decoder = OSSL_DECODER_CTX_new_for_pkey(&key, "PEM", "PrivateKeyInfo", "EC", EVP_PKEY_KEYPAIR, NULL, NULL);
    if (decoder == NULL) return NULL;
    if (OSSL_DECODER_from_data(decoder, &bytes, &length) != 1) {
        EVP_PKEY_free(key);
        key = NULL;
    }
    OSSL_DECODER_CTX_free(decoder);
    return key;
}
