"""Analyses of trained and pre-trained encoders (layer-wise similarity, ...).

Modules (imported on demand, so that ``import cselab.analysis.probes`` from the trainer stays light):

* ``layer_similarity`` — per-layer [CLS] similarity to the last layer (APINCSE Fig. 3);
* ``probes`` — training probes (alignment, uniformity, anisotropy, largest angle, layer profile) and
  the embedding-gradient norm, logged by the trainer;
* ``runs`` — run directories → pandas DataFrames (for plots and tables);
* ``gs_top4`` — GS-InfoNCE Fig. 1 (top-4 negative similarity against batch size);
* ``mixcse_geometry`` — MixCSE's spherical-cap simulation and λ bound;
* ``cluster_case_study`` — ClusterNS Table 10 (sentences grouped by the run's clusters);
* ``umap`` — 2-D maps of embeddings coloured by label (UMAP, PCA for tiny sets).
"""
