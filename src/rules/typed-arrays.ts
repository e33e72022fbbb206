type TypedArrayConstructor =
  | Int8ArrayConstructor
  | Uint8ArrayConstructor
  | Int32ArrayConstructor
  | Uint32ArrayConstructor
  | Float64ArrayConstructor;

type Carved<T extends readonly (readonly [TypedArrayConstructor, number])[]> = {
  -readonly [K in keyof T]: InstanceType<T[K][0]>;
};

/**
 * Zeroed typed arrays of the given types and lengths, views of one buffer: a typed array of more than 64 bytes made on
 * its own gets a backing store outside V8's heap, allocated and swept one by one, and a configure request makes some
 * twenty of them.
 */
export function carve<const T extends readonly (readonly [TypedArrayConstructor, number])[]>(
  specs: T,
): Carved<T> {
  const offsets: number[] = [];
  let bytes = 0;
  for (const [type, length] of specs) {
    // Each view starts at a multiple of its element size, as typed arrays must.
    bytes = Math.ceil(bytes / type.BYTES_PER_ELEMENT) * type.BYTES_PER_ELEMENT;
    offsets.push(bytes);
    bytes += length * type.BYTES_PER_ELEMENT;
  }
  const buffer = new ArrayBuffer(bytes);
  return specs.map(([type, length], i) => new type(buffer, offsets[i], length)) as Carved<T>;
}
