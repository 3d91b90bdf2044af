/** Ids grouped by the merchant that owns them: each merchant's part of a filter or a notice names it (docs/sharding.md). */
export function byMerchantOf(
  ids: ReadonlyMap<string, string> | Iterable<{ readonly merchantId: string; readonly ids: readonly string[] }>,
): Map<string, string[]> {
  const grouped = new Map<string, string[]>();
  const add = (merchantId: string, id: string) => {
    const group = grouped.get(merchantId);
    if (group) group.push(id);
    else grouped.set(merchantId, [id]);
  };
  if (ids instanceof Map) for (const [id, merchantId] of ids as ReadonlyMap<string, string>) add(merchantId, id);
  else
    for (const { merchantId, ids: own } of ids as Iterable<{ merchantId: string; ids: readonly string[] }>)
      for (const id of own) add(merchantId, id);
  for (const [merchantId, group] of grouped) if (group.length === 0) grouped.delete(merchantId);
  return grouped;
}
