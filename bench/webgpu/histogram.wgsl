// 256-bin histogram of n bytes (bench/gpu.ts `histogram`): per-workgroup bins in workgroup memory
// filled with atomics over a grid-stride loop, then added into the global bins. WGSL has no 8-bit
// storage: the bytes are read from their 32-bit words.
const BLOCK = 256u;

struct Params { n: u32 }

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> data: array<u32>;
@group(0) @binding(2) var<storage, read_write> bins: array<atomic<u32>>;

var<workgroup> s: array<atomic<u32>, 256>;

@compute @workgroup_size(BLOCK)
fn main(@builtin(local_invocation_index) t: u32, @builtin(workgroup_id) group: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
  atomicStore(&s[t], 0u);
  workgroupBarrier();
  for (var i = group.x * BLOCK + t; i < params.n; i += groups.x * BLOCK) {
    let byte = (data[i >> 2u] >> ((i & 3u) * 8u)) & 0xffu;
    atomicAdd(&s[byte], 1u);
  }
  workgroupBarrier();
  atomicAdd(&bins[t], atomicLoad(&s[t]));
}
