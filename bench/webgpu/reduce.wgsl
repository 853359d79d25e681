// Sum of x into sum[0] (bench/gpu.ts `reduceSum`): grid-stride partial sums, a tree over the
// workgroup's 256 partials in workgroup memory, then one float atomic add per workgroup. WGSL has
// no float atomics: the add is a compare-exchange loop on the sum's bits.
const BLOCK = 256u;

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> sum: array<atomic<u32>>;

var<workgroup> s: array<f32, BLOCK>;

fn atomicAddF32(v: f32) {
  var old = atomicLoad(&sum[0]);
  loop {
    let r = atomicCompareExchangeWeak(&sum[0], old, bitcast<u32>(bitcast<f32>(old) + v));
    if (r.exchanged) {
      break;
    }
    old = r.old_value;
  }
}

@compute @workgroup_size(BLOCK)
fn main(@builtin(local_invocation_index) t: u32, @builtin(workgroup_id) group: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
  var acc = 0.0;
  for (var i = group.x * BLOCK + t; i < arrayLength(&x); i += groups.x * BLOCK) {
    acc += x[i];
  }
  s[t] = acc;
  workgroupBarrier();
  for (var k = BLOCK >> 1u; k > 0u; k >>= 1u) {
    if (t < k) {
      s[t] += s[t + k];
    }
    workgroupBarrier();
  }
  if (t == 0u) {
    atomicAddF32(s[0]);
  }
}
