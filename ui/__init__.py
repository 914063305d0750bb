"""Streamlit-only helpers shared by the pages (``core`` never imports these).

The names below are stable; pages build on them. Every page starts with
``from ui.page import setup_page; setup_page()`` (deep links and standalone runs), and
``documents_or_stop(config)`` for the loaded documents (or a pointer to the Documents page).

Each page keeps its drawing in its own module and reads as a short script of calls:
``ui.home`` (app.py: navigation frame and the Documents page), ``ui.chunks_view`` (Chunks),
``ui.metadata`` (Metadata), ``ui.compare`` (Compare), ``ui.query`` + ``ui.trace`` (Query),
``ui.evaluate`` (Evaluate), ``ui.export`` (Export).

``ui.state`` — typed accessors over ``st.session_state`` (plain data only):
    SourceFile(file_name, data, digest); digest_of(data)
    sources() -> list[SourceFile]; add_source(file_name, data) -> SourceFile;
    remove_source(file_name); has_source(file_name, digest=None) -> bool
    failed_uploads() -> dict[file_name, reason]; record_failure(file_name, reason); clear_failure(file_name)
    config() -> PipelineConfig; set_config(config); default_config() -> PipelineConfig
        (the current config: loader options, splitter, metadata settings, ...; stored as to_dict() data)
    selected_doc_id() / select_doc(doc_id); selected_node_id() / select_node(node_id)
    once(flag) -> bool; push_message(text, offer_upload=False); pop_messages() -> list[Message]

``ui.cache`` — content-keyed stores over core (hits return shared, read-only objects; never change them):
    load_source(source, options=None) -> list[Document]   (keyed by the file's digest + options)
    load_file(digest, file_name, options_json, _data) -> list[Document]
    run_split_cached(documents, config) -> list[Node]      (core.documents.run_split; keyed by config.key())
    split_cached(documents, splitter_name, params_json) -> list[Node]
    metrics_cached(documents, nodes, options_json="{}") -> ChunkMetrics
    report_cached(documents, nodes, options_json="{}") -> (ChunkMetrics, tuple[dict, ...])   (one measurement; options: size_limit, tokenizer, ...)
    semantic_analysis_cached(document, splitter_name, params_json)
    count_tokens(texts: tuple[str, ...], tokenizer="model") -> list[int]
    document_tokens(document, tokenizer="model") -> int   (a whole document; shares the metrics' token index)
    Nodes (the list run_split_cached returns; .split_key); nodes_key(nodes) -> str; clear()
    params_json(params) -> str; document_key(document) -> str
    model_tokenizer(name="model"); embedder(); embedding_window() -> int

``ui.widgets`` — widgets drawn from declared parameters (one function for every component):
    param_widgets(component_cls, key, values=None, *, exclude=(), advanced_label=..., columns=1) -> dict
    build_component(component_cls, values) -> instance | None   (shows the ConfigError's sentence)
    try_build(component_cls, values) -> (instance | None, error sentence | None)
    component_picker(registry, label, key, default=None, *, help=None) -> component class
    seed_values(component_cls, key, values); widget_key(key, name) -> str; label_for(name) -> str
    md_escape(text) -> str   (untrusted text shown literally in st.markdown)

``ui.spans`` — the source with coloured chunk spans (always escaped, drawn one window at a time):
    show_source(document, nodes, *, selected_id=None, marks=(), key="source", window_chars=12000, height_px=560,
                index_of=None)
    source_html(text, nodes, *, start=0, end=None, pages=(), selected_id=None, marks=(), ...) -> str
    Mark(start, end, kind="window"|"focus"); source_windows(document, window_chars) -> list[Window]
    colour_for(index) -> str; legend_html() -> str

``ui.nodes`` — a node up close:
    reader_views(node, *, embed_window=None)  (LLM and EMBED views side by side, token counts, window warning)
    show_metadata(node); metadata_table(node) -> DataFrame; node_label(index, node) -> str
    relationship_buttons(node, index_of, nodes_by_id, on_pick, *, key="rel")

``ui.charts`` — plotly figures:
    size_histogram(sizes | {name: sizes}, *, limit=None, unit="characters", title=None)  (overlaid when several)
    distance_chart(distances, threshold, breakpoints); hierarchy_chart(nodes, labels, root_label="document")

``ui.documents`` — the loaded documents as the pages see them:
    all_documents(config=None) -> list[Document]   (each file loaded with the config's loader options)
    document_by_id(doc_id) -> Document | None; source_of(document) -> SourceFile | None
    add_file(file_name, data, *, select=False) -> reason | None; load_samples() -> list[str]; sample_files() -> list[Path]
    select_document(documents, key) -> Document   (a select box that follows the session's selected document)
    ensure_started()   (once per session: config from the URL, samples loaded; the app frame calls it)
"""
