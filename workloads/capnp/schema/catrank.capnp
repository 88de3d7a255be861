# catrank: string processing (SPEC.md §3).
@0x80d8f8135a413165;

struct SearchResultList {
  results @0 :List(SearchResult);
}

struct SearchResult {
  url @0 :Text;
  score @1 :Float64;
  snippet @2 :Text;
}
