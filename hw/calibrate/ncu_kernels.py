"""ncu_kernels.py: launch configuration and instruction counts of the ATen kernels the per-op
validation misses most (norms, softmax, index kernels, gelu, reductions), for the model's
kernel-grid assumptions. Run under ncu (see run line in hw/calibrate/README.md)."""
import torch, torch.nn.functional as F
dev = 'cuda'
bf = torch.bfloat16
def run(name, fn):
    torch.cuda.nvtx.range_push(name)
    fn()
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()
x = torch.randn(1048576, 128, device=dev, dtype=bf); g = torch.randn(128, device=dev, dtype=bf); b = torch.randn(128, device=dev, dtype=bf)
run('layernorm_1M_128', lambda: F.layer_norm(x, (128,), g, b))
run('rmsnorm_1M_128', lambda: F.rms_norm(x, (128,), g))
x2 = torch.randn(32768, 4096, device=dev, dtype=bf); g2 = torch.randn(4096, device=dev, dtype=bf); b2 = torch.randn(4096, device=dev, dtype=bf)
run('layernorm_32K_4096', lambda: F.layer_norm(x2, (4096,), g2, b2))
run('rmsnorm_32K_4096', lambda: F.rms_norm(x2, (4096,), g2))
run('softmax_32K_4096', lambda: torch.softmax(x2, -1))
run('softmax_1M_128', lambda: torch.softmax(x, -1))
t = torch.randn(65536, 128, device=dev, dtype=bf); idx = torch.randint(0, 65536, (393216,), device=dev)
run('index_select_65K_128_393K', lambda: torch.index_select(t, 0, idx))
t2 = torch.randn(128256, 4096, device=dev, dtype=bf); idx2 = torch.randint(0, 128256, (32768,), device=dev)
run('embedding_128K_4096_32K', lambda: F.embedding(idx2, t2))
e = torch.randn(268435456, device=dev, dtype=bf)
run('gelu_2^28', lambda: F.gelu(e))
run('relu_2^28', lambda: F.relu(e))
r = torch.randn(1048576, 128, device=dev, dtype=bf)
run('reduce_sum_1M_128', lambda: r.sum(-1))
