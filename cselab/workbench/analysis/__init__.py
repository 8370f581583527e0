"""The papers' analyses of trained and pre-trained encoders, one module per paper (imported on
demand):

* ``mixcse`` — positive / random-negative / mixed-negative scores, the spherical cap (section
  Distribution of BERT Embeddings) and the λ bound (section MixCSE);
* ``gs_infonce`` — Fig. 1, the top-4 negative similarity against batch size;
* ``clusterns`` — Table 10, sentences grouped by a run's clusters;
* ``apincse`` — Fig. 3, per-layer [CLS] similarity to the last layer;
* ``umap`` — 2-D maps of embeddings coloured by label (UMAP, PCA for tiny sets), for every paper;
* ``logged`` — what runs logged, as the notebooks see it: logged statistics, methods, starting models,
  series over snapshots, probes at step 0;
* ``compare`` — runs across methods, seeds and settings: groups, STS results, paired tests per
  task, ablation variants, sweeps, clustering frames.

Training monitors live with training (:mod:`cselab.model.train.probes`), run-directory readers with the
run directory (:mod:`cselab.model.rundir`).
"""
