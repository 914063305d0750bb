"""The metadata views, as LlamaIndex documents them."""

from core import Document, MetadataMode, Node, NodeRelationship


def spec_document() -> Document:
    return Document(
        text="This is a super-customized document",
        metadata={"file_name": "super_secret_document.txt", "category": "finance", "author": "LlamaIndex"},
        excluded_llm_metadata_keys=["file_name"],
        metadata_separator="::",
        metadata_template="{key}=>{value}",
        text_template="Metadata: {metadata_str}\n-----\nContent: {content}",
    )


def test_llm_view_drops_excluded_llm_keys():
    assert spec_document().get_content(MetadataMode.LLM) == (
        "Metadata: category=>finance::author=>LlamaIndex\n-----\nContent: This is a super-customized document"
    )


def test_embed_view_keeps_file_name_first():
    assert spec_document().get_content(MetadataMode.EMBED) == (
        "Metadata: file_name=>super_secret_document.txt::category=>finance::author=>LlamaIndex"
        "\n-----\nContent: This is a super-customized document"
    )


def test_none_mode_is_the_bare_text():
    assert spec_document().get_content(MetadataMode.NONE) == "This is a super-customized document"
    assert spec_document().get_content() == "This is a super-customized document"


def test_default_templates():
    node = Node(text="Body.", metadata={"a": 1, "b": "x"})
    assert node.get_content(MetadataMode.ALL) == "a: 1\nb: x\n\nBody."


def test_all_keys_excluded_gives_bare_text():
    node = Node(text="Body.", metadata={"a": 1}, excluded_embed_metadata_keys=["a"])
    assert node.get_content(MetadataMode.EMBED) == "Body."
    assert node.get_content(MetadataMode.LLM) == "a: 1\n\nBody."


def test_braces_in_text_and_values_render_literally():
    node = Node(text="f(x) = {x}", metadata={"k": "{value}"})
    assert node.get_content(MetadataMode.ALL) == "k: {value}\n\nf(x) = {x}"


def test_node_round_trips_through_dict():
    node = Node(
        text="t", id="d#0", doc_id="d", start_char=3, end_char=4,
        relationships={NodeRelationship.SOURCE: "d", NodeRelationship.CHILD: ["d#1", "d#2"]},
    )
    assert Node.from_dict(node.to_dict()) == node
    assert node.child_ids == ["d#1", "d#2"]


def test_nodes_of_one_split_can_be_changed_independently():
    from core import get_splitter

    document = Document(text="One.\n\nTwo.\n\nThree.", metadata={"a": 1}, excluded_llm_metadata_keys=["a"])
    first, second = get_splitter("character", chunk_size=5, chunk_overlap=0).split([document])[:2]
    first.excluded_llm_metadata_keys.remove("a")
    first.metadata["b"] = 2
    assert second.excluded_llm_metadata_keys == ["a"]
    assert second.metadata == {"a": 1}
    assert document.excluded_llm_metadata_keys == ["a"]


def test_contents_renders_each_nodes_views_as_get_content_does():
    from core.schema import contents

    shared = {"file_name": "a.md", "page_label": "3"}
    nodes = [
        Node(text="one", metadata=dict(shared), excluded_llm_metadata_keys=["page_label"]),
        Node(text="two", metadata=dict(shared)),
        Node(text="three", metadata={"flag": 1}),
        Node(text="four", metadata={"flag": True}),  # equal to 1, rendered differently
        Node(text="five", metadata={}),
        Node(text="six", metadata=dict(shared), metadata_template="{key}={value}", text_template="{content}\n[{metadata_str}]"),
    ]
    for mode in MetadataMode:
        assert contents(nodes, mode) == [node.get_content(mode) for node in nodes]
    assert contents(nodes, MetadataMode.ALL)[2:4] == ["flag: 1\n\nthree", "flag: True\n\nfour"]
