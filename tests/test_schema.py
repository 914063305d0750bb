"""The metadata views, as LlamaIndex documents them."""


import xxhash
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core import Document, MetadataMode, Node, NodeRelationship
from core.schema import content_id


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
        text="t",
        id="d#0",
        doc_id="d",
        start_char=3,
        end_char=4,
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
        Node(
            text="six",
            metadata=dict(shared),
            metadata_template="{key}={value}",
            text_template="{content}\n[{metadata_str}]",
        ),
    ]
    for mode in MetadataMode:
        assert contents(nodes, mode) == [node.get_content(mode) for node in nodes]
    assert contents(nodes, MetadataMode.ALL)[2:4] == ["flag: 1\n\nthree", "flag: True\n\nfour"]


# -- content ids --------------------------------------------------------------

# Texts whose first 4,096 characters are ASCII or not (the id is hashed by pieces, or whole), with ASCII runs
# and non-ASCII characters after: accents, lone surrogates, characters past U+FFFF (stored four bytes a character).
_ASCII_RUNS = st.builds(
    lambda size, word: (word * size)[:size], st.integers(0, 9000), st.sampled_from(["ab ", "x\n\n"])
)
_ID_TEXTS = st.builds(
    lambda head, middle: head + "".join(middle),
    _ASCII_RUNS,
    st.lists(
        st.one_of(
            _ASCII_RUNS,
            st.text(min_size=1, max_size=3),
            st.sampled_from(["\u00e9", "\u2019", "\ud800", "\udfff", "\U0001f600", "\u4e2d"]),
        ),
        max_size=5,
    ),
)


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(text=_ID_TEXTS, salt=st.text(max_size=20))
def test_content_id_is_xxh3_of_the_salt_a_zero_byte_and_the_whole_utf8(text: str, salt: str) -> None:
    """However the text is fed to the hash (in pieces where it is mostly ASCII), the bytes are its UTF-8."""
    whole = salt.encode("utf-8", "surrogatepass") + b"\0" + text.encode("utf-8", "surrogatepass")
    assert content_id(text, salt) == xxhash.xxh3_64(whole).hexdigest()[:12]


def test_content_ids_of_a_mostly_ascii_text_and_a_short_one() -> None:
    """The ids the previous one-piece encoding gave: a document keeps its id (and its nodes theirs) across versions."""
    mostly_ascii = "plain ascii " * 500 + "caf\u00e9 \u2019quoted\u2019 " + "more words " * 600  # 12,614 characters
    assert content_id(mostly_ascii, "x") == "af798e476ce9"
    assert content_id("\u0416\u0443\u0440\u043d\u0430\u043b \u4e2d\u6587 \U0001f600", "y") == "d83b29c4d139"
    assert content_id("hello", "a.txt") == "3f3b43ab16f0"
