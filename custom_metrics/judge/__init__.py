"""The suite's NLI judge: one interface (``types``), a spec string (``spec``), an on-disk
verdict cache (``cache``), one module per backend (``lm``, ``seqcls``, ``endpoint``) and
``build.build_judge``, the only module that imports them all."""
