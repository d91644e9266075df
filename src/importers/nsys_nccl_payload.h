// NcclPayload: what NCCL's NVTX payload says about one collective call, as an Nsight Systems export writes it in
// NVTX_EVENTS.jsonText (or the StringIds string jsonTextId names): a JSON object whose keys are NCCL's field
// names ("commHash", "seqNumber", "func", "count", "datatype", as NCCL's profiler events name them) or the labels
// of NCCL's NVTX payload schemas ("NCCL communicator ID", "Message size [bytes]", "Collective", "Datatype").
// docs/nsys.md lists the keys. The importer turns a payload into the call's CollectiveArgs: the communicator is its
// process group, the sequence number matches the call across ranks (model/collectives.h), op and size name it.
// Invariants: parsing never throws and never fails loudly: text that is not a JSON object, or has none of the
// keys, is no payload (nullopt); a key of the wrong type counts as absent.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace strata::nsys {

struct NcclPayload {
  std::optional<uint64_t> comm;  // the communicator's hash
  int64_t seq = -1;              // the call's sequence number on its communicator; -1 absent
  std::string op;                // the NCCL function ("AllReduce"); empty when absent
  int64_t count = -1;            // elements; -1 absent
  std::string dtype;             // element type as strata's byte sizes read it ("float32", "bfloat16"); "" absent
  int64_t bytes = -1;            // message size in bytes; -1 absent
};

/// The payload of a jsonText value, or nullopt when it is not a JSON object with any of NCCL's keys.
std::optional<NcclPayload> ParseNcclPayload(std::string_view json_text);

/// The group name of communicator `comm` in the store: "nccl comm 0x…" (hexadecimal, as NCCL logs commHash).
std::string CommunicatorGroupName(uint64_t comm);

}  // namespace strata::nsys
