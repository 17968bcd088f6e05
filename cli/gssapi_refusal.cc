// libzmq's GSSAPI security mechanism, answered without Kerberos: every call fails with
// GSS_S_FAILURE. Linked only into binaries that carry libzmq statically (cmake/static_client.cmake:
// the det CLI), which never enable GSSAPI (they speak CURVE or plaintext), so libzmq's references
// to these functions never run; without this file they would load Kerberos's six shared libraries.
// The names and the failure code are GSSAPI's (RFC 2744); nothing else of it is used.
#include <cstdint>

namespace {

struct GssOidDesc {
  uint32_t length;
  void* elements;
};

constexpr uint32_t kGssFailure = 13u << 16;  // GSS_S_FAILURE

GssOidDesc no_name_type{0, nullptr};

}  // namespace

extern "C" {

GssOidDesc* GSS_C_NT_HOSTBASED_SERVICE = &no_name_type;
GssOidDesc* GSS_C_NT_USER_NAME = &no_name_type;

#define DET_GSS_REFUSED(name) \
  uint32_t name() { return kGssFailure; }
DET_GSS_REFUSED(gss_accept_sec_context)
DET_GSS_REFUSED(gss_acquire_cred)
DET_GSS_REFUSED(gss_delete_sec_context)
DET_GSS_REFUSED(gss_display_name)
DET_GSS_REFUSED(gss_import_name)
DET_GSS_REFUSED(gss_init_sec_context)
DET_GSS_REFUSED(gss_release_buffer)
DET_GSS_REFUSED(gss_release_cred)
DET_GSS_REFUSED(gss_release_name)
DET_GSS_REFUSED(gss_unwrap)
DET_GSS_REFUSED(gss_wrap)
#undef DET_GSS_REFUSED

}  // extern "C"
