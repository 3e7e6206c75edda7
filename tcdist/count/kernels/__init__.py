"""One module per counting kernel, each declaring KERNEL (see count/registry.py)."""
